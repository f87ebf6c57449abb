/** One schema migration (index.ts lists them in order). */
export interface Migration {
  version: number;
  name: string;
  /** Statements for both engines. */
  statements: string[];
  /** Extra statements for one engine only. */
  sqlite?: string[];
  postgres?: string[];
}
