/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { slowFactor } from '../test/helpers/budget.js';

// Test budgets scale with the machine's load (test/helpers/budget.ts); testSetup.ts reads the factor.
const slow = slowFactor();

// The daemon serves the built app; `npm run dev` proxies the API to a running daemon.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1024 },
  // The proxy adds no token: anything that reached the dev server (an agent in its sandbox shares the network) would
  // drive the daemon. The dev board signs in with ?token= once, as the daemon's does (web/src/api/token.ts).
  server: { proxy: { '/api': { target: process.env.MAESTRO_URL ?? 'http://127.0.0.1:4300', ws: true } } },
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
