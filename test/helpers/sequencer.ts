/**
 * The order the test files start in. Vitest's workers take files in the order `sort` returns. Without a record
 * of earlier runs (a clean clone: CI) Vitest keeps the order it found the files in, which follows the directory
 * listing of that clone: in some clones the two suites that each fill both cores on their own (the multihost
 * run and the crash suite) started side by side and took 215 s and 303 s instead of 176 s and 106 s, and the
 * suite 870 s instead of about 600 s; in others they ran apart.
 *
 * So the order is planned: a simulation of the workers (`maxWorkers` of them) takes the files one by one as a
 * worker comes free, and never starts a suite that fills the machine while another one runs; meanwhile the free
 * worker takes the longest of the rest. A file's seconds are Vitest's own record of its last run when there is
 * one (a developer's machine), else the figure below (a quiet 2-core machine, rounded), else USUAL_SECONDS; files
 * with no figure go longest-source first, as Vitest's own order does. The plan only orders: a figure that is off
 * makes two such suites overlap for a while, never a test fail.
 */
import { statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Suites that keep both cores busy on their own (several daemons, PostgreSQL, real agent CLIs), in seconds. */
const FILLS_MACHINE: Record<string, number> = {
  'test/multihost/multihost.test.ts': 180,
  'test/daemon/crash.test.ts': 105,
  'test/agents/realClis.test.ts': 75,
  'test/agents/realClaudeCode.test.ts': 30,
  'test/stress/claims.test.ts': 25,
};

/** Other files that take long, in seconds; the rest take about USUAL_SECONDS. */
const LONG: Record<string, number> = {
  'test/cli/cli.test.ts': 50,
  'test/observer/cli.test.ts': 10,
  'test/web/board.e2e.test.ts': 25,
  'test/faults/diskFull.test.ts': 20,
  'test/knowledge2/chain.test.ts': 20,
  'test/cli/badInput.test.ts': 20,
  'src/daemon/mergeCoordinator.test.ts': 17,
  'src/git/divergence.test.ts': 16,
  'test/api/review.test.ts': 16,
  'test/web/gate.e2e.test.ts': 15,
  'test/agents/claudeDaemon.test.ts': 15,
  'test/mcp/mcp.test.ts': 15,
};

const USUAL_SECONDS = 4;

interface Planned {
  spec: TestSpecification;
  seconds: number;
  fillsMachine: boolean;
  size: number;
}

export class PlannedSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Several projects or group orders: Vitest's own rules decide (they run one after another).
    if (new Set(files.map((f) => `${f.project.name}\0${f.project.config.sequence.groupOrder}`)).size > 1) return super.sort(files);
    const workers = Math.max(1, Number(this.ctx.config.maxWorkers) || 1);
    return planOrder(files.map((spec) => this.planned(spec)), workers).map((p) => p.spec);
  }

  private planned(spec: TestSpecification): Planned {
    const path = relative(this.ctx.config.root, spec.moduleId);
    const recorded = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`)?.duration;
    const fillsMachine = path in FILLS_MACHINE;
    const seconds = recorded !== undefined ? recorded / 1000 : FILLS_MACHINE[path] ?? LONG[path] ?? USUAL_SECONDS;
    let size = 0;
    try {
      size = statSync(spec.moduleId).size;
    } catch {
      // A file gone since it was listed: Vitest reports it; its place here does not matter.
    }
    return { spec, seconds, fillsMachine, size };
  }
}

/** The order in which `workers` workers taking files as they come free run no two machine-filling suites at once. */
export function planOrder(files: Planned[], workers: number): Planned[] {
  const longestFirst = (a: Planned, b: Planned) => b.seconds - a.seconds || b.size - a.size;
  const filling = files.filter((f) => f.fillsMachine).sort(longestFirst);
  const rest = files.filter((f) => !f.fillsMachine).sort(longestFirst);
  const freeAt = new Array<number>(workers).fill(0);
  let fillingUntil = 0;
  const order: Planned[] = [];
  while (filling.length || rest.length) {
    const worker = freeAt.indexOf(Math.min(...freeAt));
    const now = freeAt[worker]!;
    const next = filling.length && (now >= fillingUntil || !rest.length) ? filling.shift()! : rest.shift()!;
    const start = next.fillsMachine ? Math.max(now, fillingUntil) : now;
    if (next.fillsMachine) fillingUntil = start + next.seconds;
    freeAt[worker] = start + next.seconds;
    order.push(next);
  }
  return order;
}
