// V8 flags compose-model-cache sets on itself at start (serveFunction's
// v8Flags). Node refuses them in NODE_OPTIONS, so they cannot sit with the
// young generation's size in ../node-options; `make bench` gives them to
// this function's floor on its command line, so both run the same V8.

/**
 * Grow the old generation by 10% after a full collection, not by V8's
 * default factor (up to 4x on a fast machine). With the 1 MiB young
 * generation of ../node-options, a call's live objects (a decoded 11.4 MB
 * request at 1,000 clusters) are promoted, and the default growth let the
 * old generation fill with the garbage of several calls before collecting
 * it. At 10%, V8 collects it every call or two (1-3 ms each). With the
 * other two settings, peak RSS at 1,000 clusters, calls one at a time, is
 * 93-94 MB with this flag and 131-132 MB without it. What it costs:
 * docs/design/benchmark-history.md, "Memory".
 */
export const V8_FLAGS: readonly string[] = ['--heap-growing-percent=10'];
