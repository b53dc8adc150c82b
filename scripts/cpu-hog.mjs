#!/usr/bin/env node
// A bounded CPU hog, to show the suite holds on a busy machine (issue 26): `node scripts/cpu-hog.mjs [SECONDS] [THREADS]`
// keeps THREADS cores (1 by default) busy for SECONDS (600 by default, 3600 at most), then exits by itself. Run it
// beside `npm test` or `bash .ci/run`; it touches no file and no network.
import { Worker } from "node:worker_threads";

const seconds = Math.min(3600, Math.max(1, Number(process.argv[2] ?? 600)));
const threads = Math.min(8, Math.max(1, Math.floor(Number(process.argv[3] ?? 1))));
const until = Date.now() + seconds * 1000;
const spin = `const until = ${until}; let x = 0; while (Date.now() < until) { for (let i = 0; i < 1e6; i++) x = (x * 31 + i) | 0; }`;
console.log(`cpu-hog: ${threads} thread(s) busy for ${seconds} s`);
await Promise.all(Array.from({ length: threads }, () => new Promise((resolve) => new Worker(spin, { eval: true }).on("exit", resolve))));
console.log("cpu-hog: done");
