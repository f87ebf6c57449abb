import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAESTRO_VERSION } from './daemonSettings.js';

describe('MAESTRO_VERSION', () => {
  it("is package.json's version, which daemons compare with each other", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(MAESTRO_VERSION).toBe(pkg.version);
  });
});
