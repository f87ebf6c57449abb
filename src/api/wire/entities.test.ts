/**
 * The wire schemas describe exactly the types the store, git and the daemon
 * return: a field added to `Task` (or dropped from it) breaks `npm run lint`
 * here until entities.ts says so too. Checked by tsc (expectTypeOf is a type
 * assertion); the runtime half parses a sample of each through its schema.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { AgentToolStatus } from '../../agents/detect.js';
import type { DurationStats, LineComment, SchedulerDecision, UsageByProject } from '../../core/reports.js';
import type { ScoreBreakdown } from '../../core/scoring.js';
import type { TaskSummary } from '../../core/taskSummary.js';
import type { Approval, MaestroEvent, Project, Run, Task } from '../../core/types.js';
import type { HealthCondition } from '../../daemon/health.js';
import type { StreamItem as BusStreamItem } from '../../lib/bus.js';
import type { DiffFile } from '../../git/patch.js';
import * as e from './entities.js';
import { streamItem, type REPLAY_TRUNCATED, type StreamData } from './responses.js';

describe('wire entities', () => {
  it('are the domain types, field for field', () => {
    expectTypeOf<z.output<typeof e.projectSchema>>().toEqualTypeOf<Project>();
    expectTypeOf<z.output<typeof e.taskSchema>>().toEqualTypeOf<Task>();
    expectTypeOf<z.output<typeof e.taskSummarySchema>>().toEqualTypeOf<TaskSummary>();
    expectTypeOf<z.output<typeof e.runSchema>>().toEqualTypeOf<Run>();
    expectTypeOf<z.output<typeof e.approvalSchema>>().toEqualTypeOf<Approval>();
    expectTypeOf<z.output<typeof e.eventSchema>>().toEqualTypeOf<MaestroEvent>();
    expectTypeOf<z.output<typeof e.scoreBreakdownSchema>>().toEqualTypeOf<ScoreBreakdown>();
    expectTypeOf<z.output<typeof e.schedulerDecisionSchema>>().toEqualTypeOf<SchedulerDecision>();
    expectTypeOf<z.output<typeof e.durationStatsSchema>>().toEqualTypeOf<DurationStats>();
    expectTypeOf<z.output<typeof e.usageByProjectSchema>>().toEqualTypeOf<UsageByProject>();
    expectTypeOf<z.output<typeof e.lineCommentSchema>>().toEqualTypeOf<LineComment>();
    expectTypeOf<z.output<typeof e.diffFileSchema>>().toEqualTypeOf<DiffFile>();
    expectTypeOf<z.output<typeof e.healthConditionSchema>>().toEqualTypeOf<HealthCondition>();
    expectTypeOf<z.output<typeof e.agentToolStatusSchema>>().toEqualTypeOf<AgentToolStatus>();
    // The bus's item becomes SSE `data:` as { runId, seq, ...data }: every bus item fits it.
    expectTypeOf<{ runId: BusStreamItem['runId']; seq: BusStreamItem['seq'] } & BusStreamItem['data']>().toExtend<StreamData>();
    // Every bus item is an SSE item of its kind; the stream adds one of its own, what a replay left out.
    expectTypeOf<z.output<typeof streamItem>['kind']>().toEqualTypeOf<BusStreamItem['kind'] | typeof REPLAY_TRUNCATED>();
  });

  it('refuse a row with a field they do not describe (strict), so the answers test sees drift', () => {
    const approval = { id: 'a1', taskId: 't1', gate: 'plan_review', decision: 'approve', reason: null, who: 'web', at: 1, conflictResolution: false };
    expect(e.approvalSchema.parse(approval)).toEqual(approval);
    expect(() => e.approvalSchema.parse({ ...approval, extra: 1 })).toThrow(/extra/);
    expect(() => e.approvalSchema.parse({ ...approval, gate: 'nope' })).toThrow(/gate/);
  });
});
