/**
 * A folder of fake agent CLIs under their real names (codex, gemini,
 * cursor-agent, opencode), to put first on a worker's PATH: the providers
 * then start them exactly as they would start the real tools.
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliToolKind } from '../../../src/agents/cli/tools.js';

export const FAKES: Record<CliToolKind, string> = {
  codex: fileURLToPath(new URL('./fake-codex.mjs', import.meta.url)),
  gemini: fileURLToPath(new URL('./fake-gemini.mjs', import.meta.url)),
  cursor: fileURLToPath(new URL('./fake-cursor.mjs', import.meta.url)),
  opencode: fileURLToPath(new URL('./fake-opencode.mjs', import.meta.url)),
};

export const EXECUTABLES: Record<CliToolKind, string> = { codex: 'codex', gemini: 'gemini', cursor: 'cursor-agent', opencode: 'opencode' };

/** Creates `<dir>/bin` with the four fakes linked under their tools' names; returns the folder. */
export function fakeBin(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const kind of Object.keys(FAKES) as CliToolKind[]) symlinkSync(FAKES[kind], join(bin, EXECUTABLES[kind]));
  return bin;
}
