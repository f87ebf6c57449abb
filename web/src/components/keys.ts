/**
 * Single-key shortcuts (j/k, a/r) act only when the person is not typing:
 * never in a field, never with a modifier held (Ctrl+R reloads, it does not reject).
 */
export function isShortcut(e: KeyboardEvent): boolean {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return false;
  const el = e.target as HTMLElement | null;
  if (!el || typeof el.closest !== 'function') return true;
  return !el.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]');
}
