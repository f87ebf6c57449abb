#!/usr/bin/env node
// The `maestro` command. Runs the compiled CLI from dist/ when it has been built
// (`npm run build`; `npm start` builds first), else the TypeScript sources
// through tsx. MAESTRO_FROM_SOURCE=1 forces the sources.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dist = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(fileURLToPath(dist)) && !process.env.MAESTRO_FROM_SOURCE) {
  await import(dist.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
