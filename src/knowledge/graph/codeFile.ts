/** What a code reader (codeGraph.ts for TS/JS, treeSitterCode.ts for the rest) returns for one file. */

export interface CodeSymbol {
  name: string;
  kind: string;
  line: number;
  signature: string;
}

export interface ParsedCodeFile {
  symbols: CodeSymbol[];
  imports: string[];
}
