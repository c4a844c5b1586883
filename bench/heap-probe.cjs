// Preloaded into the benchmarked host (`NODE_OPTIONS=--require`): on SIGWINCH it appends the
// process's memory figures (bytes) as one JSON line to FENGYU_BENCH_HEAP_OUT. Nothing else: no
// timer, no collection; the host runs as it would without it.
const { appendFileSync } = require('node:fs');
const out = process.env.FENGYU_BENCH_HEAP_OUT;
if (out) process.on('SIGWINCH', () => appendFileSync(out, `${JSON.stringify(process.memoryUsage())}\n`));
