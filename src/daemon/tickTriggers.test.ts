import { describe, expect, it } from 'vitest';
import type { MaestroEvent } from '../core/types.js';
import { TickTriggers } from './tickTriggers.js';

let nextId = 1;
const moved = (taskId: string, from: string, to: string, owner?: string): MaestroEvent => ({
  id: nextId++, projectId: 'p1', taskId, runId: null, traceId: null, type: 'task.status', payload: { from, to, ...(owner ? { owner } : {}) }, at: 0,
});

describe("a task's status event, as daemon a hears it", () => {
  it("ticks for every move of its own task, as it always did", () => {
    const t = new TickTriggers('a');
    expect(t.wants(moved('T1', 'ready', 'queued', 'a'), true)).toBe('tick');
    for (const [from, to] of [['queued', 'executing'], ['executing', 'exec_review'], ['exec_review', 'merging'], ['merging', 'done']]) {
      expect(t.wants(moved('T1', from!, to!), false)).toBe('tick');
    }
  });

  it("leaves a task daemon b claimed to b while b holds it, and asks only for a merge round once it is approved", () => {
    const t = new TickTriggers('a');
    expect(t.wants(moved('T2', 'ready', 'queued', 'b'), true)).toBe('none');
    expect(t.wants(moved('T2', 'queued', 'planning'), true)).toBe('none');
    expect(t.wants(moved('T2', 'planning', 'plan_review'), true)).toBe('none');
    expect(t.wants(moved('T2', 'plan_review', 'executing'), true)).toBe('none');
    expect(t.wants(moved('T2', 'executing', 'awaiting_input'), true)).toBe('none');
    expect(t.wants(moved('T2', 'exec_review', 'merging'), true)).toBe('merges');
  });

  it("ticks when b's task ends or goes back to ready while a has room (a dependency done, a retry), and asks for a merge round when it has none", () => {
    const t = new TickTriggers('a');
    t.wants(moved('T3', 'ready', 'queued', 'b'), true);
    expect(t.wants(moved('T3', 'merging', 'done'), true)).toBe('tick');
    t.wants(moved('T4', 'ready', 'queued', 'b'), true);
    expect(t.wants(moved('T4', 'executing', 'ready'), false)).toBe('merges');
    // Once it left b, it is no longer b's: its next moves tick as any task's.
    expect(t.wants(moved('T4', 'ready', 'cancelled'), false)).toBe('tick');
  });

  it('ticks for a task b took back and a then claimed, and for a task whose claim it never heard', () => {
    const t = new TickTriggers('a');
    t.wants(moved('T5', 'ready', 'queued', 'b'), true);
    expect(t.wants(moved('T5', 'queued', 'ready'), true)).toBe('tick');
    expect(t.wants(moved('T5', 'ready', 'queued', 'a'), true)).toBe('tick');
    expect(t.wants(moved('T5', 'queued', 'executing'), true)).toBe('tick');
    expect(t.wants(moved('T6', 'executing', 'reviewing'), false)).toBe('tick');
    expect(t.wants({ ...moved('T7', 'executing', 'reviewing'), payload: {} }, false)).toBe('tick');
  });

  it("ticks for a task a took over from b at its stage, and leaves one c took over to c; a release ticks every daemon", () => {
    const t = new TickTriggers('a');
    const over = (taskId: string, owner: string): MaestroEvent => ({ ...moved(taskId, '', ''), type: 'task.taken_over', payload: { owner, previousOwner: 'b', status: 'reviewing' } });
    const released: MaestroEvent = { ...moved('T8', '', ''), type: 'task.released', payload: { owner: 'b', status: 'reviewing' } };
    t.wants(moved('T8', 'ready', 'queued', 'b'), true);
    expect(t.wants(moved('T8', 'executing', 'reviewing'), true)).toBe('none');
    // b stopped: any daemon may take it now, whatever room it has (a takeover claims no new slot-free work).
    expect(t.wants(released, false)).toBe('tick');
    expect(t.wants(over('T8', 'a'), false)).toBe('tick');
    // a's from now on: its moves tick a, as its own claims' do.
    expect(t.wants(moved('T8', 'reviewing', 'exec_review'), false)).toBe('tick');
    t.wants(moved('T9', 'ready', 'queued', 'b'), true);
    expect(t.wants(over('T9', 'c'), true)).toBe('none');
    expect(t.wants(moved('T9', 'reviewing', 'exec_review'), true)).toBe('none');
  });

  it('ticks for a task created or edited only while a has room, and not for other events', () => {
    const t = new TickTriggers('a');
    const event = (type: string): MaestroEvent => ({ ...moved('T8', 'ready', 'ready'), type, payload: {} });
    expect(t.wants(event('task.created'), true)).toBe('tick');
    expect(t.wants(event('task.edited'), false)).toBe('none');
    expect(t.wants(event('run.phase'), true)).toBe('none');
  });
});
