// The one way the providers create a viem public client: typed from the start as the `PublicClient` they keep.
// viem infers a narrower client from the arguments, and widening it to `PublicClient` makes the type checker compare
// the two structurally, about a second at each place that did it.
import { type Chain, createPublicClient, type PublicClient, type PublicClientConfig, type Transport } from 'viem';

export function publicClient(
  parameters: PublicClientConfig<Transport, Chain | undefined, undefined, undefined, undefined>,
): PublicClient {
  return createPublicClient<Transport, Chain | undefined>(parameters);
}
