/**
 * SessionUiSource: what the terminal UI needs from a live ObserverSession —
 * its view, change notifications (from the runner's steps), and the `k` key's
 * audit filing.
 */
import { EventEmitter } from 'node:events';
import type { ObserverSession } from '../session.js';
import { acceptProposal, dismissProposal, listProposals } from '../curation/proposals.js';
import { fileAudit } from '../upkeep/audit.js';
import type { SessionView } from '../view.js';
import type { ObserverUiSource } from './app.js';

export class SessionUiSource implements ObserverUiSource {
  private readonly changes = new EventEmitter();

  constructor(
    private session: ObserverSession,
    private readonly wikiRoot: string,
    private readonly now: () => number = Date.now,
    private readonly projectSlug = 'unknown',
  ) {}

  /** The follower moved to a newer session: show that one from now on. */
  switchTo(session: ObserverSession): void {
    if (session === this.session) return;
    this.session = session;
    this.notify();
  }

  /** The runner calls this after each step. */
  notify(): void {
    this.changes.emit('change');
  }

  view(): SessionView {
    return this.session.view();
  }

  subscribe(listener: () => void): () => void {
    this.changes.on('change', listener);
    return () => this.changes.off('change', listener);
  }

  fileAudit(input: { targetId: string; explorationId: string; request: string }): string {
    return fileAudit(
      this.wikiRoot,
      { targetId: input.targetId, sessionId: this.session.sessionId, explorationId: input.explorationId, contextRequest: input.request },
      new Date(this.now()),
    ).file;
  }

  openProposals(): ReadonlyMap<string, { targetId: string; newFacts: string[] }> {
    return new Map(listProposals(this.wikiRoot).open.map((p) => [p.id, { targetId: p.targetId, newFacts: p.newFacts }]));
  }

  decideProposal(id: string, decision: 'accept' | 'dismiss'): string {
    const now = new Date(this.now());
    if (decision === 'dismiss') {
      dismissProposal(this.wikiRoot, id, { now });
      this.notify();
      return `Proposal ${id} dismissed; the entry is unchanged.`;
    }
    const { entry } = acceptProposal(this.wikiRoot, id, { projectSlug: this.projectSlug, now });
    this.notify();
    return `Proposal accepted: ${entry.id} updated (${entry.relativePath}).`;
  }
}
