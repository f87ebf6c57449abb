/**
 * session.flow: the exploration graph the web app draws (FORMATS §8.3). The
 * fingerprint is a plain string of what the graph shows, so the revision only
 * moves when something visible changed.
 */
import { cutOutsideMarkers } from '../../core/redact.js';
import type { FlowGraph, FlowNode, SessionBundle } from './types.js';
import type { Exploration } from '../transcript/types.js';

const RELATIONSHIP = { trunk: 'main', repair: 'repair', parallel: 'side', merge: 'merge' } as const;

export function flowFingerprint(bundle: SessionBundle, explorations: readonly Exploration[]): string {
  const ordered = [...explorations].sort((a, b) => a.startedAt - b.startedAt || a.index - b.index);
  const parts: string[] = [];
  for (const e of ordered) {
    const b = bundle.explorations[e.id];
    parts.push(`${e.id}:${e.status}`);
    if (b?.summary) parts.push(`summary:${e.id}:${b.summary.text}`);
    const hint = bundle.session.flow.flowchartHints[e.id];
    if (hint) parts.push(`hint:${e.id}:${JSON.stringify(hint)}`);
    if (b?.write) parts.push(`wiki:${e.id}:${b.write.status}`);
  }
  return parts.join('|');
}

/** Rebuilds the graph when the fingerprint moved; returns whether it did. */
export function updateFlow(bundle: SessionBundle, explorations: readonly Exploration[], now: number): boolean {
  const fingerprint = flowFingerprint(bundle, explorations);
  if (fingerprint === bundle.session.flow.fingerprint && bundle.session.flow.flowGraph) return false;
  const sid = bundle.meta.sessionId;
  const nodes: FlowNode[] = [];
  const edges: FlowGraph['edges'] = [];
  let previous: FlowNode | null = null;
  for (const e of explorations) {
    const b = bundle.explorations[e.id];
    const hint = bundle.session.flow.flowchartHints[e.id];
    if (hint?.dropFromChart) continue;
    const errors = e.nodes.filter((n) => n.type === 'error' || n.status === 'error').length;
    const node: FlowNode = {
      id: `${sid}:${e.id}`,
      explorationId: e.id,
      intentKey: hint?.intentKey ?? 'general',
      label: hint?.nodeTitle ?? e.question.slice(0, cutOutsideMarkers(e.question, 48)),
      status: e.status === 'running' ? 'running' : errors && e.status !== 'interrupted' && e.nodes[e.nodes.length - 1]?.type === 'error' ? 'error' : e.status,
      startedAt: e.startedAt,
      ...(e.endedAt !== undefined ? { endedAt: e.endedAt } : {}),
      summaryPreview: (b?.summary?.text ?? '').slice(0, 120),
      metaBadges: { tools: e.nodes.filter((n) => n.type === 'tool').length, errors, wiki: b?.write?.status ?? (e.status === 'running' ? 'pending' : 'none') },
    };
    nodes.push(node);
    if (previous) edges.push({ from: previous.id, to: node.id, relationship: RELATIONSHIP[hint?.branchType ?? 'trunk'] });
    previous = node;
  }
  bundle.session.flow.flowGraph = { nodes, edges, ...(previous ? { focusNodeId: previous.id } : {}), updatedAt: now };
  bundle.session.flow.fingerprint = fingerprint;
  bundle.session.flow.revision += 1;
  return true;
}
