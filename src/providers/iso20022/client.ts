// The bank's ISO 20022 host-to-host API over HTTPS (docs/iso20022.md): post a pain.001 and read its pain.002, ask a
// payment's status, page through the bank's reports (pain.002, camt.054) and fetch a day's camt.053. Every call is
// bounded by a timeout; an outage, a timeout or a 5xx is RailUnavailableError (the operation's outcome unknown).
import { RailUnavailableError } from '../fiat-rails';
import {
  parseCamt053,
  parseCamt054,
  parsePain002,
  validatePain001,
  type Camt053,
  type Camt054,
  type Pain002,
} from './messages';

export type BankReport =
  { sequence: number; type: 'pain.002'; message: Pain002 } | { sequence: number; type: 'camt.054'; message: Camt054 };

export interface Iso20022BankOptions {
  /** e.g. http://127.0.0.1:4100/iso20022 (the bank simulator) or the bank's host-to-host URL. */
  baseUrl: string;
  timeoutMs: number;
}

export class Iso20022BankClient {
  constructor(private readonly options: Iso20022BankOptions) {}

  /** Sends a pain.001 (validated against its XSD first: nothing invalid leaves) and returns the bank's pain.002. */
  async initiate(pain001: string): Promise<Pain002> {
    await validatePain001(pain001);
    const response = await this.call('/payment-initiations', {
      method: 'POST',
      body: pain001,
      headers: { 'content-type': 'application/xml' },
    });
    return parsePain002(await response.text());
  }

  /** The payment's status; null when the bank never received it. */
  async status(endToEndId: string): Promise<Pain002 | null> {
    const response = await this.call(`/payment-status/${encodeURIComponent(endToEndId)}`, {}, [404]);
    return response.status === 404 ? null : parsePain002(await response.text());
  }

  /** The bank's reports after `after` (its sequence), oldest first, at most `limit`. */
  async reports(after: number, limit: number): Promise<{ reports: BankReport[]; last: number }> {
    const response = await this.call(`/reports?after=${after}&limit=${limit}`);
    const body = (await response.json()) as {
      reports: Array<{ sequence: number; type: string; xml: string }>;
      last: number;
    };
    return {
      last: body.last,
      reports: body.reports.map((report) =>
        report.type === 'pain.002'
          ? { sequence: report.sequence, type: 'pain.002', message: parsePain002(report.xml) }
          : { sequence: report.sequence, type: 'camt.054', message: parseCamt054(report.xml) },
      ),
    };
  }

  /** The camt.053 of the account in `currency` for `date` (YYYY-MM-DD). */
  async statement(currency: string, date: string): Promise<Camt053> {
    const response = await this.call(`/statements/${currency}/${date}`);
    return parseCamt053(await response.text());
  }

  /** Sandbox only: the bank simulator's scenario controls (the partners' `simulate` values). */
  async scenario(body: Record<string, unknown>): Promise<unknown> {
    const response = await this.call('/_scenarios', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    return response.json();
  }

  private async call(pathname: string, init: RequestInit = {}, accepted: number[] = []): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(`${this.options.baseUrl}${pathname}`, {
        ...init,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (error) {
      throw new RailUnavailableError(
        `ISO 20022 bank: ${pathname}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (!response.ok && !accepted.includes(response.status)) {
      throw new RailUnavailableError(`ISO 20022 bank: ${pathname}: HTTP ${response.status}`);
    }
    return response;
  }
}
