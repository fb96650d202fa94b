// Sums jest JSON reports into the one closing line CI reads: "N passed, N failed".
// Exits non-zero when anything failed, a suite failed to run, or a report is missing.
import { existsSync, readFileSync } from 'node:fs';

let passed = 0;
let failed = 0;
let skipped = 0;
let broken = 0;
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) {
    console.error(`report: ${file} is missing (that jest run did not finish)`);
    broken++;
    continue;
  }
  const r = JSON.parse(readFileSync(file, 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + (r.numTodoTests ?? 0);
  // A suite that fails to load counts no test but is still a failure.
  broken += r.numRuntimeErrorTestSuites ?? 0;
  for (const s of r.testResults ?? []) {
    if (s.status === 'failed' && (s.assertionResults ?? []).every((a) => a.status !== 'failed')) {
      console.error(
        `report: suite ${s.name} failed to run: ${(s.message ?? '').split('\n').slice(0, 5).join(' ')}`,
      );
    }
  }
}
failed += broken;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
