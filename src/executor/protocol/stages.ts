/**
 * stages.json: the stages this run has finished, with what each produced, and
 * the inbox messages already consumed. Written after every stage (atomically),
 * so a worker restarted on the same run directory skips finished stages and
 * reuses their output instead of calling the agent again.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { MaestroError } from '../../core/errors.js';
import { readJsonFile, writeJsonAtomic } from './files.js';

export const STAGES_FILE = 'stages.json';

export interface StageEntry {
  at: number;
  output: unknown;
}

export interface StagesFile {
  done: Record<string, StageEntry>;
  consumedInbox: string[];
  /** Instructions taken from the inbox for a stage that has not finished yet: a restart of that stage gets them again. */
  instructions: Record<string, string[]>;
  /** Usage as of the last finished stage, so a restarted worker's result still counts what earlier stages spent. */
  usage: unknown;
}

/** What a worker wrote; a key left out is an older worker's file (or none yet). */
const stagesSchema = z.object({
  done: z.record(z.string(), z.object({ at: z.number(), output: z.unknown() })).optional(),
  consumedInbox: z.array(z.string()).optional(),
  instructions: z.record(z.string(), z.array(z.string())).optional(),
  usage: z.unknown().optional(),
});

/**
 * The run's stages.json, checked: a file something else wrote over (`null`, `"done": "abc"`) is refused naming the
 * file and the field (CORRUPT_FILE), not taken for a run with nothing done, nor left to fail later as a TypeError.
 */
export function readStages(runDir: string): StagesFile {
  const path = join(runDir, STAGES_FILE);
  if (!existsSync(path)) return { done: {}, consumedInbox: [], instructions: {}, usage: null };
  const parsed = stagesSchema.safeParse(readJsonFile(path));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new MaestroError('CORRUPT_FILE', `${path} is not a stages file: ${problems.join('; ')}`, { details: { file: path } });
  }
  const raw = parsed.data;
  return { done: (raw.done ?? {}) as StagesFile['done'], consumedInbox: raw.consumedInbox ?? [], instructions: raw.instructions ?? {}, usage: raw.usage ?? null };
}

export class StageBook {
  private state: StagesFile;
  constructor(private readonly runDir: string) {
    this.state = readStages(runDir);
  }
  isDone(stage: string): boolean {
    return Object.hasOwn(this.state.done, stage);
  }
  output<T>(stage: string): T {
    return this.state.done[stage]?.output as T;
  }
  markDone(stage: string, output: unknown, usage?: unknown): void {
    this.state.done[stage] = { at: Date.now(), output: output ?? null };
    if (usage !== undefined) this.state.usage = usage;
    this.save();
  }
  savedUsage<T>(): T | null {
    return (this.state.usage as T) ?? null;
  }
  /** Forget a stage (and everything recorded after it) so it runs again; used by loops such as retries. */
  forget(stage: string): void {
    delete this.state.done[stage];
    this.save();
  }
  /**
   * Consumes inbox messages for a stage and remembers their text with it, in one write; with nothing new
   * (most agent calls) nothing is written: an atomic write costs two fsyncs, and a stage with no entry reads as none.
   */
  takeInstructions(stage: string, messages: Array<{ id: string; text: string }>): string[] {
    const list = [...(this.state.instructions[stage] ?? [])];
    for (const m of messages) {
      if (this.isConsumed(m.id)) continue;
      this.state.consumedInbox.push(m.id);
      list.push(m.text);
    }
    if (list.length === (this.state.instructions[stage]?.length ?? 0)) return list;
    this.state.instructions[stage] = list;
    this.save();
    return [...list];
  }
  isConsumed(messageId: string): boolean {
    return this.state.consumedInbox.includes(messageId);
  }
  consume(messageId: string): void {
    if (this.isConsumed(messageId)) return;
    this.state.consumedInbox.push(messageId);
    this.save();
  }
  private save(): void {
    writeJsonAtomic(join(this.runDir, STAGES_FILE), this.state);
  }
}
