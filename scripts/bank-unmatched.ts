// What the banks reported that the service could not take (bank_unmatched_entries; docs/iso20022.md "Unmatched
// entries"): a camt.054 credit naming no transaction, a return or credit the service refused, kept for operators.
//   npm run bank:unmatched -- [--since <ISO date>] [--bank iso20022] [--json]
// One line per entry, oldest first. Reads DATABASE_URL (or the development database). The money of a credit stays on
// the service's account until an operator finds its owner (or sends it back through the bank).
import { parseArgs } from 'node:util';
import { listUnmatchedBankEntries, type UnmatchedBankEntryRow } from '../src/persistence/bank-credits';
import { CommandUsageError, runOperatorCommand } from './lib/operator-command';

/** The text lines of `rows` (a header first). */
export function unmatchedLines(rows: UnmatchedBankEntryRow[]): string[] {
  return [
    'recorded_at\tbank\tsource\taccount\tdirection\tamount\tcurrency\treference\tbooking_date\tmessage_id\tremittance\tdetail',
    ...rows.map((row) =>
      [
        row.recordedAt.toISOString(),
        row.bank,
        row.source,
        row.account,
        row.direction,
        row.amount,
        row.currency,
        row.entryReference,
        row.bookingDate,
        row.messageId,
        row.remittance ?? '',
        row.detail,
      ].join('\t'),
    ),
  ];
}

if (require.main === module) {
  runOperatorCommand('bank-unmatched', async (prisma) => {
    const { values } = parseArgs({
      options: { since: { type: 'string' }, bank: { type: 'string' }, json: { type: 'boolean' } },
    });
    const since = values.since ? new Date(values.since) : undefined;
    if (since && Number.isNaN(since.getTime())) {
      throw new CommandUsageError('usage: npm run bank:unmatched -- [--since ISO-DATE] [--bank NAME] [--json]');
    }
    const rows = await listUnmatchedBankEntries(prisma, { since, bank: values.bank });
    return values.json ? rows.map((row) => JSON.stringify(row)) : unmatchedLines(rows);
  });
}
