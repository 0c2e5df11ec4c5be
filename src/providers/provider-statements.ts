// Provider statements: what the exchange, the banks and the chain report they did, line by line, for a window of
// time. The reconciliation compares them with the ledger's postings (docs/reconciliation.md), so that what the
// providers did is checked against what the service recorded, not against the service's own notes.
import type { StatementLine } from '../domain/reconciliation';
import type { DatabaseClient } from '../persistence/database';
import { sandboxStatementPage } from '../persistence/sandbox-statements';
import { ProviderUnavailableError, type Unconnected } from './unavailable';

export type { StatementLine };

export interface StatementWindow {
  from: Date;
  to: Date;
}

export interface StatementPage {
  lines: StatementLine[];
  /** The cursor of the next page; null after the last. */
  next: string | null;
}

export interface ProviderStatements {
  /**
   * The lines of the operations made in [from, to), at most `limit`, after `cursor` (null: from the start) in an order
   * that does not change between pages. Throws ProviderUnavailableError when the statement cannot be read.
   */
  statementFor(window: StatementWindow, cursor: string | null, limit: number): Promise<StatementPage>;
}

/**
 * The sandbox's statement: its simulated providers' own operation log (sandbox_rail_operations), as a real provider's
 * statement lists its operations, told to disagree where an operator asked (sandbox_statement_adjustments:
 * `npm run reconciliation -- sandbox-statement`).
 */
export class SandboxProviderStatements implements ProviderStatements {
  constructor(private readonly prisma: DatabaseClient) {}

  statementFor(window: StatementWindow, cursor: string | null, limit: number): Promise<StatementPage> {
    return sandboxStatementPage(this.prisma, window, cursor, limit);
  }
}

/** No provider's statement is read yet: the reconciliation reports its provider checks as skipped, never clean. */
export class UnconnectedProviderStatements implements ProviderStatements, Unconnected {
  readonly unconnected = 'no provider statement is connected';

  async statementFor(): Promise<StatementPage> {
    throw new ProviderUnavailableError(this.unconnected);
  }
}
