// JSON logs, one object per line. Nothing from a request body is ever logged:
// a request can carry a token, so log lines hold names, counts and timings only.

export type Level = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, string | number | boolean | string[] | Record<string, number> | undefined>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  readonly debugEnabled: boolean;
}

export interface LoggerOptions {
  function: string;
  debug: boolean;
  write?: (line: string) => void;
  now?: () => Date;
}

export function jsonLogger(options: LoggerOptions): Logger {
  const write = options.write ?? ((line: string) => process.stdout.write(line));
  const now = options.now ?? (() => new Date());
  const emit = (level: Level, msg: string, fields?: LogFields): void => {
    const entry: Record<string, unknown> = { level, time: now().toISOString(), function: options.function, msg };
    for (const [key, value] of Object.entries(fields ?? {})) if (value !== undefined) entry[key] = value;
    write(`${JSON.stringify(entry)}\n`);
  };
  return {
    debugEnabled: options.debug,
    debug: (msg, fields) => {
      if (options.debug) emit('debug', msg, fields);
    },
    info: (msg, fields) => {
      emit('info', msg, fields);
    },
    warn: (msg, fields) => {
      emit('warn', msg, fields);
    },
    error: (msg, fields) => {
      emit('error', msg, fields);
    },
  };
}
