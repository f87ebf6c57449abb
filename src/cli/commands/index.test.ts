import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../program.js';
import { COMMAND_MODULES, modulesFor } from './index.js';

const names = (c: Command) => c.commands.flatMap((s) => [s.name(), ...s.aliases()]);

describe('the lazy command table', () => {
  it('names exactly the top-level commands each module registers', async () => {
    for (const m of COMMAND_MODULES) {
      const program = new Command('maestro');
      (await m.load()).register(program, { env: process.env });
      expect(names(program).sort()).toEqual([...m.commands].sort());
    }
  });

  it('loads only the owning module for a command, and everything otherwise', async () => {
    const all = await buildProgram([], { env: process.env });
    const every = names(all);
    expect(new Set(every).size).toBe(every.length);
    for (const name of every) {
      const one = await buildProgram([name, '--json'], { env: process.env });
      expect(names(one)).toContain(name);
      expect(one.commands.length).toBeLessThan(all.commands.length);
    }
    for (const args of [['--help'], ['help', 'search'], ['--version'], ['serch'], ['--json', 'search']]) expect(modulesFor(args)).toBe(COMMAND_MODULES);
    expect(all.helpInformation()).toBe((await buildProgram(['--help'], { env: process.env })).helpInformation());
  });
});
