// The pure rules of transactions (src/domain/transactions.ts), the pix copy-paste code, and what
// each settlement step posts (src/ledger.ts settlementEntries): balanced per currency, and a whole
// settlement (or its refund) leaves clearing and in-transit at zero.
import { crc16Ccitt, pixCopyPasteCode } from '../src/domain/brazil';
import { Currency, Decimal, Money } from '../src/domain/money';
import { fiatRails } from '../src/domain/rails';
import {
  canTransition,
  decideDeposit,
  depositDeadlineOf,
  depositReferenceFrom,
  depositWindowMs,
  isFinal,
  normaliseDepositReference,
  transactionStatuses,
  transitions,
} from '../src/domain/transactions';
import { LedgerEntryInput, ledgerAccounts, reversed, settlementEntries } from '../src/domain/ledger';

describe('statuses', () => {
  it('never go back to awaiting_deposit, and the final ones have no way out', () => {
    for (const from of transactionStatuses) expect(canTransition(from, 'awaiting_deposit')).toBe(false);
    expect(transactionStatuses.filter(isFinal)).toEqual(['cancelled', 'failed', 'refunded']);
    for (const from of ['cancelled', 'failed', 'refunded'] as const) {
      for (const to of transactionStatuses) expect(canTransition(from, to)).toBe(false);
    }
  });

  it('completed leads only to returned (the bank sent the payout back), which ends completed again or refunded', () => {
    expect(transitions.completed).toEqual(['returned']);
    expect(transitions.returned).toEqual(['completed', 'refunded']);
  });

  it('cancel only from awaiting_deposit; error only from processing and back only to processing', () => {
    const into = (to: string) => transactionStatuses.filter((from) => canTransition(from, to as never));
    expect(into('cancelled')).toEqual(['awaiting_deposit']);
    expect(into('failed')).toEqual(['awaiting_deposit']);
    expect(into('error')).toEqual(['processing']);
    expect(transitions.error).toEqual(['processing']);
    expect(into('completed')).toEqual(['processing', 'returned']);
    expect(into('refunded')).toEqual(['processing', 'returned']);
    expect(into('returned')).toEqual(['completed']);
  });

  it('every status is reachable from awaiting_deposit', () => {
    const reached = new Set<string>(['awaiting_deposit']);
    for (let round = 0; round < transactionStatuses.length; round += 1) {
      for (const from of [...reached]) for (const to of transitions[from as never] as string[]) reached.add(to);
    }
    expect([...reached].sort()).toEqual([...transactionStatuses].sort());
  });
});

describe('deposit deadline', () => {
  it('is minutes on instant rails and chains, days on bank transfers', () => {
    const created = new Date('2026-11-22T10:00:00.000Z');
    expect(Object.keys(depositWindowMs).sort()).toEqual([...fiatRails, 'ethereum', 'solana'].sort());
    expect(depositDeadlineOf(created, 'solana').toISOString()).toBe('2026-11-22T11:00:00.000Z');
    expect(depositDeadlineOf(created, 'ethereum').toISOString()).toBe('2026-11-22T11:00:00.000Z');
    expect(depositDeadlineOf(created, 'pix').toISOString()).toBe('2026-11-22T10:30:00.000Z');
    expect(depositDeadlineOf(created, 'spei').toISOString()).toBe('2026-11-22T10:30:00.000Z');
    expect(depositDeadlineOf(created, 'cvu').toISOString()).toBe('2026-11-22T10:30:00.000Z');
    expect(depositDeadlineOf(created, 'sepa').toISOString()).toBe('2026-11-24T10:00:00.000Z');
    expect(depositDeadlineOf(created, 'wire').toISOString()).toBe('2026-11-24T10:00:00.000Z');
    expect(depositDeadlineOf(created, 'ach').toISOString()).toBe('2026-11-25T10:00:00.000Z');
  });
});

describe('deposits', () => {
  const brl = (value: string) => Money.parse('BRL', value);

  it('settle only the exact amount while awaiting the deposit', () => {
    expect(decideDeposit('awaiting_deposit', brl('1000.00'), brl('1000'))).toEqual({ action: 'settle' });
    expect(decideDeposit('awaiting_deposit', brl('1000.00'), brl('999.99'))).toEqual({
      action: 'refund',
      reason: 'amount_mismatch',
    });
    expect(decideDeposit('awaiting_deposit', brl('1000.00'), brl('1000.01'))).toEqual({
      action: 'refund',
      reason: 'amount_mismatch',
    });
  });

  it('are returned on their own once the transaction no longer waits for one', () => {
    for (const status of ['processing', 'completed', 'cancelled', 'failed', 'refunded', 'error'] as const) {
      expect(decideDeposit(status, brl('1000.00'), brl('1000.00'))).toEqual({
        action: 'return',
        reason: 'not_awaiting_deposit',
      });
    }
  });
});

describe('deposit reference', () => {
  it('is TX and 10 Crockford base32 characters, read back whatever the case, spacing or look-alikes', () => {
    const reference = depositReferenceFrom(Uint8Array.from([0, 1, 2, 30, 31, 32, 100, 200, 250, 255]));
    expect(reference).toBe('TX012YZ048TZ');
    expect(reference).toMatch(/^TX[0-9A-HJKMNP-TV-Z]{10}$/);
    expect(normaliseDepositReference(reference)).toBe(reference);
    expect(normaliseDepositReference('tx01 2yz0 48tz')).toBe('TX012YZ048TZ');
    expect(normaliseDepositReference('TX-O12YZ-O48TZ')).toBe('TX012YZ048TZ');
    expect(normaliseDepositReference('012YZ048TZ')).toBe('TX012YZ048TZ');
    expect(normaliseDepositReference('TXI12YZ048TL')).toBe('TX112YZ048T1');
    for (const bad of ['', 'TX123', 'TX012YZ048TZZ', 'TXU12YZ048TZ', 'hello world!']) {
      expect(normaliseDepositReference(bad)).toBeNull();
    }
    expect(() => depositReferenceFrom(new Uint8Array(4))).toThrow();
  });
});

describe('pix copy-paste code', () => {
  it('is a BR Code whose CRC-16/CCITT checks', () => {
    expect(crc16Ccitt('123456789')).toBe('29B1');
    const code = pixCopyPasteCode({
      key: '11222333000181',
      amount: '10.50',
      beneficiaryName: 'Pagamentos Ação Ltda',
      city: 'São Paulo',
      txid: 'TX012YZ04881',
    });
    expect(code).toBe(
      '000201010212' +
        '26360014br.gov.bcb.pix011411222333000181' +
        '520400005303986540510.50' +
        '5802BR5920PAGAMENTOS ACAO LTDA6009SAO PAULO' +
        '62160512TX012YZ04881' +
        '6304' +
        crc16Ccitt(code.slice(0, -4)),
    );
    expect(() =>
      pixCopyPasteCode({ key: 'k', amount: '1', beneficiaryName: 'n', city: 'c', txid: 'not valid!' }),
    ).toThrow();
  });
});

describe('settlement postings', () => {
  const partnerId = 'p-1';
  const walletId = 'w-1';
  const fees = {
    service: Money.parse('BRL', '5.00'),
    partner: Money.parse('BRL', '11.00'),
    network: Money.parse('BRL', '0.06'),
  };
  const deposit = Money.parse('BRL', '1000.00');
  const converted = Money.parse('BRL', '983.94');
  const stablecoin = Money.parse('USDC', '195.803060');
  const receiver = Money.parse('MXN', '3315.33');
  const leg1 = settlementEntries.fiatToStablecoin({ partnerId, walletId, fees, converted, stablecoin });

  function net(...postings: LedgerEntryInput[][]): Map<string, Decimal> {
    const totals = new Map<string, Decimal>();
    for (const { account, amount } of postings.flat()) {
      const name = 'walletId' in account ? `wallet:${account.walletId}` : account.system;
      const key = `${name}:${account.currency}`;
      totals.set(key, (totals.get(key) ?? new Decimal(0)).plus(amount.toString()));
    }
    return totals;
  }

  function balancedPerCurrency(entries: LedgerEntryInput[]): boolean {
    const totals = new Map<Currency, Decimal>();
    for (const { account, amount } of entries) {
      totals.set(account.currency, (totals.get(account.currency) ?? new Decimal(0)).plus(amount.toString()));
    }
    return [...totals.values()].every((total) => total.isZero());
  }

  it('balance per currency, step by step', () => {
    for (const posting of [
      settlementEntries.depositReceived(deposit),
      leg1,
      settlementEntries.stablecoinToFiat({ walletId, stablecoin, receiver }),
      settlementEntries.paidOut(receiver),
      reversed(leg1),
    ]) {
      expect(balancedPerCurrency(posting)).toBe(true);
    }
    // No zero entries (a partner fee of 0 is left out).
    const noPartnerFee = settlementEntries.fiatToStablecoin({
      partnerId,
      walletId,
      fees: { ...fees, partner: Money.zero('BRL') },
      converted: converted.plus(fees.partner),
      stablecoin,
    });
    expect(noPartnerFee.some(({ account }) => 'system' in account && account.system.startsWith('partner_fees'))).toBe(
      false,
    );
  });

  it('leave clearing and in-transit at zero, and the fees where the quote said, after a completed settlement', () => {
    const totals = net(
      settlementEntries.depositReceived(deposit),
      leg1,
      settlementEntries.stablecoinToFiat({ walletId, stablecoin, receiver }),
      settlementEntries.paidOut(receiver),
    );
    const at = (key: string) => totals.get(key)?.toFixed() ?? '0';
    expect(at('fiat_clearing:BRL')).toBe('0');
    expect(at('fiat_clearing:MXN')).toBe('0');
    expect(at(`in_transit:${walletId}:USDC`)).toBe('0');
    expect(at('fee_revenue:BRL')).toBe('5');
    expect(at(`partner_fees:${partnerId}:BRL`)).toBe('11');
    expect(at('network_fees:BRL')).toBe('0.06');
    expect(at('settlement:BRL')).toBe('-1000');
    expect(at('settlement:MXN')).toBe('3315.33');
    expect(at('fx:USDC')).toBe('0');
    expect(ledgerAccounts.inTransit(walletId, 'USDC')).toMatchObject({ allowNegative: false });
  });

  it('leave every account at zero after a refund of leg 1 and the deposit', () => {
    const totals = net(
      settlementEntries.depositReceived(deposit),
      leg1,
      reversed(leg1),
      settlementEntries.paidOut(deposit),
    );
    for (const [key, total] of totals) expect([key, total.toFixed()]).toEqual([key, '0']);
  });
});
