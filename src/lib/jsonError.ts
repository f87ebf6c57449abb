/** A JSON.parse error with its line number (V8 gives a character position; a person wants the line). */
export function jsonErrorWhere(text: string, err: Error): string {
  const pos = /position (\d+)/.exec(err.message)?.[1];
  if (pos === undefined) return err.message;
  const at = Number(pos);
  const line = text.slice(0, at).split('\n').length;
  return `line ${line}: ${err.message}`;
}
