import { parseSymbol, parseSymbolList } from './symbols.js';
import type { TickerSelection } from './ticker-quotes.service.js';

export type SelectionKind = TickerSelection['kind'];

/** The symbols a request of `kind` asks for, from its path parameters: 400 when malformed. */
export function selectionOf(kind: SelectionKind, params: Record<string, string>): TickerSelection {
  switch (kind) {
    case 'one':
      return { kind, symbol: parseSymbol(params.symbol ?? '') };
    case 'many':
      return { kind, symbols: parseSymbolList(params.symbols ?? '') };
    case 'all':
      return { kind };
  }
}
