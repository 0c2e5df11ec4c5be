package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/authorization"
	"google.golang.org/grpc"
)

// verifiedIdentity is what withIdentity keeps in Claims.Extensions: the person the token names.
type verifiedIdentity struct {
	Name string
}

type identityClaimMapper struct {
	inner authorization.ClaimMapper
	claim string
}

// identityClaimMapperNoAuthInfo keeps the inner mapper's choice to run without a token or certificate.
type identityClaimMapperNoAuthInfo struct {
	identityClaimMapper
	required bool
}

func (m *identityClaimMapperNoAuthInfo) AuthInfoRequired() bool { return m.required }

// withIdentity wraps the configured claim mapper: once it has accepted a token (signature, expiry, audience), the
// token's `claim` (the email by default, else its subject) is kept with the claims for stampIdentity.
func withIdentity(inner authorization.ClaimMapper, claim string) authorization.ClaimMapper {
	mapper := identityClaimMapper{inner: inner, claim: claim}
	if withAuthInfo, ok := inner.(authorization.ClaimMapperWithAuthInfoRequired); ok {
		return &identityClaimMapperNoAuthInfo{identityClaimMapper: mapper, required: withAuthInfo.AuthInfoRequired()}
	}
	return &mapper
}

func (m *identityClaimMapper) GetClaims(authInfo *authorization.AuthInfo) (*authorization.Claims, error) {
	claims, err := m.inner.GetClaims(authInfo)
	if err != nil || claims == nil || authInfo == nil || authInfo.AuthToken == "" || claims.Subject == "" {
		return claims, err
	}
	name := claims.Subject
	if value := tokenClaim(authInfo.AuthToken, m.claim); value != "" {
		name = value
	}
	claims.Extensions = &verifiedIdentity{Name: name}
	return claims, nil
}

// tokenClaim reads a string claim of a bearer token the inner mapper has already verified.
func tokenClaim(header string, claim string) string {
	_, token, found := strings.Cut(header, " ")
	if !found {
		return ""
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var values map[string]any
	if json.Unmarshal(payload, &values) != nil {
		return ""
	}
	value, _ := values[claim].(string)
	return value
}

// stampIdentity runs after the authorization interceptor: on the calls a person makes to a workflow from the UI or
// the CLI, the identity the client typed is replaced by the one of their verified token, so the history (and the
// audit row the workflow writes from it) names who was signed in. Calls without a token (the services, on the
// internal frontend) are left as they are.
func stampIdentity(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	claims, _ := ctx.Value(authorization.MappedClaims).(*authorization.Claims)
	if claims == nil {
		return handler(ctx, req)
	}
	identity, ok := claims.Extensions.(*verifiedIdentity)
	if !ok || identity.Name == "" {
		return handler(ctx, req)
	}
	switch request := req.(type) {
	case *workflowservice.UpdateWorkflowExecutionRequest:
		if meta := request.GetRequest().GetMeta(); meta != nil {
			meta.Identity = identity.Name
		}
	case *workflowservice.SignalWorkflowExecutionRequest:
		request.Identity = identity.Name
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		request.Identity = identity.Name
	case *workflowservice.TerminateWorkflowExecutionRequest:
		request.Identity = identity.Name
	case *workflowservice.ResetWorkflowExecutionRequest:
		request.Identity = identity.Name
	case *workflowservice.RequestCancelWorkflowExecutionRequest:
		request.Identity = identity.Name
	}
	return handler(ctx, req)
}
