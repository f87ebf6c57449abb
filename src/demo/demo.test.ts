import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../../test/helpers/db.js';
import { freeDemoSlot } from './demo.js';

afterEach(() => removeTempDirs());

describe('freeDemoSlot', () => {
  it('takes a missing or empty folder, and passes over anything with content or with its scenario left beside it', () => {
    const root = tempDir();
    expect(freeDemoSlot(root)).toBe(join(root, 'greeter'));
    mkdirSync(join(root, 'greeter'));
    expect(freeDemoSlot(root)).toBe(join(root, 'greeter'));
    writeFileSync(join(root, 'greeter', 'README.md'), 'mine');
    expect(freeDemoSlot(root)).toBe(join(root, 'greeter-2'));
    writeFileSync(join(root, 'greeter-2.scenario.yaml'), 'steps: []');
    expect(freeDemoSlot(root)).toBe(join(root, 'greeter-3'));
  });
});
