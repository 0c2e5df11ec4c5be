package main

import (
	"context"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
)

// Calls that end or rewrite a settlement's run outside its own logic: Temporal's default authorizer classes them as
// ordinary writes, so an operator (who must be able to send updates) could also terminate or reset a settlement that
// holds money. They are kept for the admin role.
var adminOnlyMethods = map[string]bool{
	"TerminateWorkflowExecution": true,
	"ResetWorkflowExecution":     true,
	"DeleteWorkflowExecution":    true,
}

type destructiveAdminOnly struct {
	inner authorization.Authorizer
}

// adminOnlyDestructive wraps the configured authorizer: what it refuses stays refused; what it allows is allowed
// unless the call terminates, resets or deletes (one workflow or a batch) and the caller is not an admin. Without an
// authorizer (no sign-on) the server is left as configured.
func adminOnlyDestructive(inner authorization.Authorizer) authorization.Authorizer {
	if authorization.IsNoopAuthorizer(inner) {
		return inner
	}
	return &destructiveAdminOnly{inner: inner}
}

func (a *destructiveAdminOnly) Authorize(
	ctx context.Context,
	claims *authorization.Claims,
	target *authorization.CallTarget,
) (authorization.Result, error) {
	result, err := a.inner.Authorize(ctx, claims, target)
	if err != nil || result.Decision != authorization.DecisionAllow {
		return result, err
	}
	if isDestructive(target) && !isAdmin(claims, target.Namespace) {
		return authorization.Result{
			Decision: authorization.DecisionDeny,
			Reason:   "terminate, reset and delete need the admin role",
		}, nil
	}
	return result, nil
}

func isDestructive(target *authorization.CallTarget) bool {
	method := api.MethodName(target.APIName)
	if adminOnlyMethods[method] {
		return true
	}
	if method != "StartBatchOperation" {
		return false
	}
	batch, ok := target.Request.(*workflowservice.StartBatchOperationRequest)
	if !ok {
		// A batch whose kind cannot be read is treated as the worst kind.
		return true
	}
	switch batch.GetOperation().(type) {
	case *workflowservice.StartBatchOperationRequest_TerminationOperation,
		*workflowservice.StartBatchOperationRequest_ResetOperation,
		*workflowservice.StartBatchOperationRequest_DeletionOperation:
		return true
	}
	return false
}

func isAdmin(claims *authorization.Claims, namespace string) bool {
	if claims == nil {
		return false
	}
	return (claims.System|claims.Namespaces[namespace])&authorization.RoleAdmin != 0
}
