// The server span of an API request, named after its route template once the router matched it
// (`POST /v1/fiat-to-fiat`), as OpenTelemetry's HTTP conventions name server spans. Nothing when tracing is off.
import { trace } from '@opentelemetry/api';

export function nameServerSpan(method: string, route: string | null): void {
  const span = trace.getActiveSpan();
  if (!span || !route) return;
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
}
