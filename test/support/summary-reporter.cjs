// Prints one plain closing line ("jest: N passed, N failed, N skipped") that CI reads. It is
// written at exit so that it comes after jest's own summary.
const { writeSync } = require('node:fs');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `jest: ${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped\n`;
    process.once('exit', () => writeSync(1, line));
  }
}
module.exports = SummaryReporter;
