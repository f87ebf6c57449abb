/**
 * Per test file: vitest's default test and hook timeouts scaled for the load at the moment the file
 * starts (test/helpers/budget.ts), not only for the load when the run began.
 */
import { vi } from 'vitest';
import { budget } from './budget.js';

vi.setConfig({ testTimeout: budget(120_000), hookTimeout: budget(120_000) });
