/**
 * The task's dependency graph as SVG: its children (a planned parent) or its
 * siblings and dependencies, layered so every edge points right.
 */
import { useTranslation } from 'react-i18next';
import type { TaskSummary } from '../../api/types.js';
import { navigate } from '../../stores/route.js';
import { visible } from '../hiddenChars.js';
import styles from './Detail.module.css';

/** A node's label, cut to fit its box. */
const short = (title: string) => (title.length > 22 ? `${title.slice(0, 21)}…` : title);

export function layers(nodes: TaskSummary[]): Map<string, number> {
  const ids = new Set(nodes.map((n) => n.id));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const depth = new Map<string, number>();
  const visit = (id: string, stack: Set<string>): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (stack.has(id)) return 0; // a cycle: the store refuses them, but never loop on one
    stack.add(id);
    const deps = (byId.get(id)?.deps ?? []).filter((d) => ids.has(d));
    const d = deps.length ? Math.max(...deps.map((x) => visit(x, stack))) + 1 : 0;
    stack.delete(id);
    depth.set(id, d);
    return d;
  };
  for (const n of nodes) visit(n.id, new Set());
  return depth;
}

export function DepGraph({ task, children, all }: { task: TaskSummary; children: TaskSummary[]; all: Record<string, TaskSummary> }) {
  const { t } = useTranslation();
  const family = children.length ? children : task.parentId ? Object.values(all).filter((x) => x.parentId === task.parentId && x.status !== 'superseded') : [];
  const nodes = [...family];
  for (const d of task.deps) if (!nodes.some((n) => n.id === d) && all[d]) nodes.push(all[d]);
  if (!children.length && !nodes.some((n) => n.id === task.id)) nodes.push(task);
  if (nodes.length < 2) return null;
  const depth = layers(nodes);
  const cols = new Map<number, TaskSummary[]>();
  for (const n of nodes) cols.set(depth.get(n.id)!, [...(cols.get(depth.get(n.id)!) ?? []), n]);
  const W = 150, H = 34, GX = 40, GY = 10;
  const pos = new Map<string, { x: number; y: number }>();
  for (const [c, list] of cols) list.forEach((n, i) => pos.set(n.id, { x: c * (W + GX), y: i * (H + GY) }));
  const width = Math.max(...[...pos.values()].map((p) => p.x)) + W;
  const height = Math.max(...[...pos.values()].map((p) => p.y)) + H;
  return (
    <section className={styles.section} aria-labelledby="graph-h">
      <h3 id="graph-h">{t('detail.graph')}</h3>
      <svg width={width} height={height} role="img" aria-label={t('detail.graphLabel', { count: nodes.length })} style={{ maxWidth: '100%', height: 'auto' }} viewBox={`0 0 ${width} ${height}`}>
        {nodes.flatMap((n) =>
          n.deps
            .filter((d) => pos.has(d))
            .map((d) => {
              const a = pos.get(d)!, b = pos.get(n.id)!;
              return <line key={`${d}-${n.id}`} x1={a.x + W} y1={a.y + H / 2} x2={b.x} y2={b.y + H / 2} stroke="#7cc4ff" strokeWidth={1.5} />;
            }),
        )}
        {nodes.map((n) => {
          const p = pos.get(n.id)!;
          return (
            <g key={n.id} transform={`translate(${p.x},${p.y})`} tabIndex={0} role="link" aria-label={visible(n.title)} onClick={() => navigate({ name: 'board', taskId: n.id })} onKeyDown={(e) => e.key === 'Enter' && navigate({ name: 'board', taskId: n.id })} style={{ cursor: 'pointer' }}>
              <rect width={W} height={H} rx={4} fill={n.id === task.id ? '#2b3a48' : '#222930'} stroke={n.status === 'done' ? '#7ee2a8' : '#36404a'} />
              <text x={6} y={14} fill="#e8ecef" fontSize={11}>{short(visible(n.title))}</text>
              <text x={6} y={28} fill="#a9b4be" fontSize={10}>{t(`status.${n.status}`)}</text>
            </g>
          );
        })}
      </svg>
    </section>
  );
}
