// Print the run's closing line in the plain form CI reads: "Tests: N passed, N failed, N skipped",
// and before it each failed test by file and name with the first lines of its failure: CI keeps only
// the tail of a run's output, so a failure must be readable there.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

// Several reports (make e2e's two lanes) make one line.
const files = process.argv.length > 2 ? process.argv.slice(2) : ['.test-results/vitest.json'];
const reports = [];
for (const file of files) {
  try {
    reports.push(JSON.parse(readFileSync(file, 'utf8')));
  } catch (error) {
    console.error(`no test report at ${file}: ${error.message}`);
    process.exit(1);
  }
}
const sum = (field) => reports.reduce((total, report) => total + (report[field] ?? 0), 0);
for (const suite of reports.flatMap((report) => report.testResults ?? [])) {
  for (const test of suite.assertionResults ?? []) {
    if (test.status !== 'failed') continue;
    const where = relative(process.cwd(), suite.name);
    const why = (test.failureMessages ?? []).join('\n').split('\n').slice(0, 6).join('\n    ');
    console.log(`FAILED ${where} > ${test.fullName ?? test.title} (${Math.round((test.duration ?? 0) / 1000)} s)\n    ${why}`);
  }
  if (suite.status === 'failed' && (suite.assertionResults ?? []).every((t) => t.status !== 'failed')) {
    console.log(`FAILED ${relative(process.cwd(), suite.name)}: ${(suite.message ?? '').split('\n')[0]}`);
  }
}
console.log(
  `Tests: ${sum('numPassedTests')} passed, ${sum('numFailedTests')} failed, ${sum('numPendingTests') + sum('numTodoTests')} skipped`,
);
