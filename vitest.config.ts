import { defineConfig } from 'vitest/config';
import { budget } from './test/helpers/budget.js';
import { PlannedSequencer } from './test/helpers/sequencer.js';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // budgetSetup scales the timeouts below again for the load when each file starts.
    setupFiles: ['test/helpers/budgetSetup.ts', 'test/helpers/leakCheck.ts'],
    globalSetup: ['test/helpers/globalSetup.ts'],
    testTimeout: budget(120_000),
    hookTimeout: budget(120_000),
    // A worker whose tests ended takes a while to exit on a loaded machine (vitest only logs it).
    teardownTimeout: budget(30_000),
    pool: 'forks',
    // A worker runs its files one after another in one process, the modules they share loaded once. A fresh
    // process per file cost about 1.5 s of a worker's time per file on a loaded 2-core machine (starting it,
    // loading src/ again): 857 s for the whole suite, 745 s without (both clean clones, CI=true). What a file
    // changes of the process (an environment variable, a tracked resource) it puts back, and leakCheck.ts still
    // fails the file that does not, per file: its hooks run before every file.
    isolate: false,
    // 2 cores: more workers only contend with the processes the suites start.
    maxWorkers: 2,
    // Never two suites that fill the machine at once, whatever order a clone lists the files in.
    sequence: { sequencer: PlannedSequencer },
  },
});
