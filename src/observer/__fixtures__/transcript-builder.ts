/**
 * Test helper: writes Claude Code-shaped JSONL records the way Claude Code
 * does (one object per line, assistant content blocks split across records
 * that repeat the message id and usage). Timestamps come from a settable clock.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export class TranscriptBuilder {
  private seq = 0;
  private lines: string[] = [];
  constructor(public clock = Date.parse('2026-11-20T10:00:00.000Z')) {}

  private ts(advanceMs = 1_000): string {
    this.clock += advanceMs;
    return new Date(this.clock).toISOString();
  }

  private push(record: Record<string, unknown>): this {
    this.lines.push(JSON.stringify(record));
    return this;
  }

  user(text: string): this {
    return this.push({ type: 'user', uuid: `u${++this.seq}`, timestamp: this.ts(), message: { role: 'user', content: text } });
  }

  /** One assistant turn: optional tools (each followed by its result), then a final text with end_turn. */
  turn(opts: { tools?: Array<{ name: string; input: Record<string, unknown>; result?: string; error?: boolean }>; answer?: string; end?: boolean; usage?: { input: number; output: number } }): this {
    const id = `msg_${++this.seq}`;
    const usage = { input_tokens: opts.usage?.input ?? 100, output_tokens: opts.usage?.output ?? 20 };
    for (const tool of opts.tools ?? []) {
      const toolId = `toolu_${++this.seq}`;
      this.push({ type: 'assistant', uuid: `a${this.seq}`, timestamp: this.ts(), message: { id, role: 'assistant', content: [{ type: 'tool_use', id: toolId, name: tool.name, input: tool.input }], stop_reason: 'tool_use', usage } });
      this.push({ type: 'user', uuid: `u${++this.seq}`, timestamp: this.ts(), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolId, content: tool.result ?? 'ok', is_error: tool.error === true }] } });
    }
    if (opts.answer !== undefined || opts.end !== false) {
      this.push({
        type: 'assistant',
        uuid: `a${++this.seq}`,
        timestamp: this.ts(),
        message: { id: `${id}_final`, role: 'assistant', content: [{ type: 'text', text: opts.answer ?? 'Done.' }], stop_reason: opts.end === false ? null : 'end_turn', usage },
      });
    }
    return this;
  }

  raw(line: string): this {
    this.lines.push(line);
    return this;
  }

  /** Advance the clock without writing anything (idle time). */
  wait(ms: number): this {
    this.clock += ms;
    return this;
  }

  take(): string {
    const out = this.lines.map((l) => `${l}\n`).join('');
    this.lines = [];
    return out;
  }

  writeTo(path: string): void {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, this.take());
  }

  appendTo(path: string): void {
    appendFileSync(path, this.take());
  }
}

export interface TempDir {
  path: string;
  cleanup(): void;
}

export function tempDir(prefix = 'maestro-observer-'): TempDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** Writes a knowledge entry file the way a person or an older writer would. */
export function writeEntry(wikiRoot: string, rel: string, fm: Record<string, string | string[]>, body = ''): string {
  const path = join(wikiRoot, 'knowledge', rel);
  mkdirSync(dirname(path), { recursive: true });
  const lines = ['---'];
  for (const [k, v] of Object.entries(fm)) {
    if (Array.isArray(v)) {
      lines.push(`${k}:`);
      for (const item of v) lines.push(`  - "${item}"`);
    } else lines.push(`${k}: ${v}`);
  }
  lines.push('---', '', body);
  writeFileSync(path, lines.join('\n'));
  return path;
}
