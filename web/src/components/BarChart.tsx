/** A horizontal bar chart in plain SVG, with its numbers written out (a chart nobody can read is no chart). */
export function BarChart({ data, label, unit = '' }: { data: { label: string; value: number }[]; label: string; unit?: string }) {
  const max = Math.max(1e-9, ...data.map((d) => d.value));
  const row = 20;
  const labelW = 130;
  const barW = 160;
  const fmt = (v: number) => (unit === '$' ? `$${v.toFixed(4)}` : Number.isInteger(v) ? String(v) : `${v.toFixed(2)}${unit}`);
  return (
    <svg role="img" aria-label={label} width="100%" viewBox={`0 0 ${labelW + barW + 80} ${data.length * row + 4}`}>
      {data.map((d, i) => (
        <g key={`${d.label}-${i}`} transform={`translate(0,${i * row})`}>
          <text x={labelW - 6} y={14} textAnchor="end" fill="#a9b4be" fontSize={11}>
            {d.label.length > 18 ? `${d.label.slice(0, 17)}…` : d.label}
          </text>
          <rect x={labelW} y={3} height={row - 6} width={Math.max(1, (d.value / max) * barW)} fill="#7cc4ff" />
          <text x={labelW + (d.value / max) * barW + 6} y={14} fill="#e8ecef" fontSize={11}>
            {fmt(d.value)}
          </text>
        </g>
      ))}
    </svg>
  );
}
