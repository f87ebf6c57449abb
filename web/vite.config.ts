/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The daemon serves the built app; `npm run dev` proxies the API to a running daemon.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1024 },
  server: { proxy: { '/api': { target: process.env.MAESTRO_URL ?? 'http://127.0.0.1:4300', ws: true } } },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.tsx', 'src/**/*.test.ts'],
    setupFiles: ['src/testSetup.ts'],
    pool: 'forks',
    testTimeout: 20_000,
    maxWorkers: 2,
  },
});
