#!/usr/bin/env node
import { runCli } from './run.js';

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`sluice: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
