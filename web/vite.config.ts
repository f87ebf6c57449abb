/// <reference types="vitest/config" />
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { slowFactor } from '../test/helpers/budget.js';

/**
 * The dev server is a client of the daemon, like the CLI: its proxy sends the
 * daemon's token (MAESTRO_TOKEN, else $MAESTRO_HOME/token, read when the dev
 * server starts), since the board's cookie belongs to the daemon's own host.
 */
function daemonToken(): string | null {
  if (process.env.MAESTRO_TOKEN) return process.env.MAESTRO_TOKEN;
  try {
    return readFileSync(join(process.env.MAESTRO_HOME || join(homedir(), '.maestro'), 'token'), 'utf8').trim() || null;
  } catch {
    return null;
  }
}
const token = daemonToken();
// Test budgets scale with the machine's load (test/helpers/budget.ts); testSetup.ts reads the factor.
const slow = slowFactor();

// The daemon serves the built app; `npm run dev` proxies the API to a running daemon.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1024 },
  server: { proxy: { '/api': { target: process.env.MAESTRO_URL ?? 'http://127.0.0.1:4300', ws: true, headers: token ? { authorization: `Bearer ${token}` } : {} } } },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.tsx', 'src/**/*.test.ts'],
    setupFiles: ['src/testSetup.ts'],
    pool: 'forks',
    testTimeout: Math.round(20_000 * slow),
    env: { MAESTRO_TEST_SLOW: String(slow) },
    maxWorkers: 2,
  },
});
