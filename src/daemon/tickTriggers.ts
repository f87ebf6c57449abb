/**
 * What a task's status event asks of this daemon. On a shared PostgreSQL every daemon hears every other's events,
 * and a tick on each (about 25 queries) made every task's moves cost every daemon alike: with three daemons, two
 * thirds of a daemon's ticks were for work it could do nothing about. A task another daemon claimed and still
 * holds (queued, at work, at a gate) is that daemon's to move on; here it asks at most for a merge round (any
 * daemon may land approved work). Its claim, its return to ready and its end are heard as before: work may have
 * become claimable (a dependency done, a slot on the project freed), which matters while this daemon has room.
 * A task whose claim this daemon never heard (it started later) is treated as before: every move ticks. A task taken
 * over where it stands (`task.taken_over`) is its taker's from then on; one a stopping daemon released
 * (`task.released`) ticks every daemon, any of which may take it.
 */
import { GATE_STATUSES, IN_FLIGHT_STATUSES } from '../core/status.js';
import type { MaestroEvent } from '../core/types.js';
import { TASK_CHANGE_TYPES } from '../store/ops/events.js';

export type TickWant = 'tick' | 'merges' | 'none';

const HELD: readonly string[] = [...IN_FLIGHT_STATUSES, ...GATE_STATUSES];

export class TickTriggers {
  /** Tasks another daemon claimed and holds → that daemon. */
  private readonly elsewhere = new Map<string, string>();

  constructor(private readonly me: string) {}

  /**
   * What event `e` asks for. `room`: whether this daemon's last tick left a slot free (a claim could follow). A task
   * created or edited can only be claimed: a tick only with room (a burst of a planner's tasks ticked every daemon
   * back to back; a slot that frees brings its own tick).
   */
  wants(e: MaestroEvent, room: boolean): TickWant {
    if (e.type === 'task.status') return this.statusEvent(e, room);
    if (e.type === 'task.taken_over') return this.takenOver(e);
    // A stopping daemon let a task go between stages: whoever ticks first takes it (store/ops/claim.ts expireClaims).
    if (e.type === 'task.released') return 'tick';
    return room && (TASK_CHANGE_TYPES as readonly string[]).includes(e.type) ? 'tick' : 'none';
  }

  /** A task taken over where it stands (its claimer's lease ended): the taker's from now on, who starts its stage. */
  private takenOver(e: MaestroEvent): TickWant {
    const owner = typeof e.payload.owner === 'string' ? e.payload.owner : null;
    if (!e.taskId || owner === null) return 'tick';
    if (owner === this.me) {
      this.elsewhere.delete(e.taskId);
      return 'tick';
    }
    this.elsewhere.set(e.taskId, owner);
    return 'none';
  }

  private statusEvent(e: MaestroEvent, room: boolean): TickWant {
    const to = typeof e.payload.to === 'string' ? e.payload.to : null;
    const id = e.taskId;
    if (!id || !to) return 'tick';
    const claimer = to === 'queued' && typeof e.payload.owner === 'string' ? e.payload.owner : null;
    if (claimer !== null) {
      if (claimer === this.me) this.elsewhere.delete(id);
      else {
        this.elsewhere.set(id, claimer);
        // Taken from the ready work this daemon could have claimed: nothing for it to do.
        return 'none';
      }
    }
    if (this.elsewhere.has(id)) {
      if (HELD.includes(to)) return to === 'merging' ? 'merges' : 'none';
      this.elsewhere.delete(id);
      // Back to ready, or ended: claimable work may have appeared (a dependency done, a retry); merges finish parents.
      return room ? 'tick' : 'merges';
    }
    return 'tick';
  }
}
