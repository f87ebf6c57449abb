/**
 * A long list in a line of human output, cut to its first items and a count of the rest: a plan of 3,000
 * subtasks made `task show` print 540 KB and `task cancel` one line of 100 KB, which no one reads. --json
 * keeps every item.
 */

/** How many items a line shows before "… and N more": a screen's width of ids, a few lines of titles. */
export const SHOWN_ITEMS = 10;

/** "a, b, c" or "a, b, … and 2,990 more". */
export function shortList(items: readonly string[], shown = SHOWN_ITEMS): string {
  if (items.length <= shown) return items.join(', ');
  return `${items.slice(0, shown).join(', ')}, … and ${(items.length - shown).toLocaleString('en-US')} more`;
}
