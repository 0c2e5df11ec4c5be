package main

import (
	"context"
	"encoding/base64"
	"testing"

	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/authorization"
	"google.golang.org/grpc"
)

const service = "/temporal.api.workflowservice.v1.WorkflowService/"

func decide(t *testing.T, claims *authorization.Claims, method string, request any) authorization.Decision {
	t.Helper()
	authorizer := adminOnlyDestructive(authorization.NewDefaultAuthorizer())
	result, err := authorizer.Authorize(context.Background(), claims, &authorization.CallTarget{
		APIName: service + method, Namespace: "default", Request: request,
	})
	if err != nil {
		t.Fatal(err)
	}
	return result.Decision
}

func TestTerminateResetAndDeleteNeedAdmin(t *testing.T) {
	operator := &authorization.Claims{Subject: "oscar", Namespaces: map[string]authorization.Role{"default": authorization.RoleWriter}}
	admin := &authorization.Claims{Subject: "ada", Namespaces: map[string]authorization.Role{"default": authorization.RoleAdmin}}
	for _, method := range []string{"TerminateWorkflowExecution", "ResetWorkflowExecution", "DeleteWorkflowExecution"} {
		if decide(t, operator, method, nil) != authorization.DecisionDeny {
			t.Errorf("an operator's %s was allowed", method)
		}
		if decide(t, admin, method, nil) != authorization.DecisionAllow {
			t.Errorf("an admin's %s was refused", method)
		}
	}
	if decide(t, operator, "UpdateWorkflowExecution", nil) != authorization.DecisionAllow {
		t.Error("an operator's update was refused")
	}
	terminateAll := &workflowservice.StartBatchOperationRequest{
		Operation: &workflowservice.StartBatchOperationRequest_TerminationOperation{},
	}
	if decide(t, operator, "StartBatchOperation", terminateAll) != authorization.DecisionDeny {
		t.Error("an operator's batch terminate was allowed")
	}
	signalAll := &workflowservice.StartBatchOperationRequest{
		Operation: &workflowservice.StartBatchOperationRequest_SignalOperation{},
	}
	if decide(t, operator, "StartBatchOperation", signalAll) != authorization.DecisionAllow {
		t.Error("an operator's batch signal was refused")
	}
}

type fixedClaims struct{ claims authorization.Claims }

func (f fixedClaims) GetClaims(*authorization.AuthInfo) (*authorization.Claims, error) {
	claims := f.claims
	return &claims, nil
}

func TestTheTokensEmailReplacesTheTypedIdentity(t *testing.T) {
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"oscar","email":"oscar@example.com"}`))
	mapper := withIdentity(fixedClaims{authorization.Claims{Subject: "oscar"}}, "email")
	claims, err := mapper.GetClaims(&authorization.AuthInfo{AuthToken: "Bearer e30." + payload + ".signature"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.WithValue(context.Background(), authorization.MappedClaims, claims)
	update := &workflowservice.UpdateWorkflowExecutionRequest{
		Request: &updatepb.Request{Meta: &updatepb.Meta{UpdateId: "u", Identity: "someone.else"}},
	}
	terminate := &workflowservice.TerminateWorkflowExecutionRequest{Identity: "someone.else"}
	pass := func(_ context.Context, req any) (any, error) { return req, nil }
	for _, request := range []any{update, terminate} {
		if _, err := stampIdentity(ctx, request, &grpc.UnaryServerInfo{}, pass); err != nil {
			t.Fatal(err)
		}
	}
	if update.GetRequest().GetMeta().GetIdentity() != "oscar@example.com" || terminate.GetIdentity() != "oscar@example.com" {
		t.Errorf("identities %q and %q, want the token's email", update.Request.Meta.Identity, terminate.Identity)
	}
	// Without a token (a service on the internal frontend) the caller's identity stays.
	service := &workflowservice.SignalWorkflowExecutionRequest{Identity: "worker@host"}
	internal := context.WithValue(context.Background(), authorization.MappedClaims,
		&authorization.Claims{System: authorization.RoleAdmin})
	if _, err := stampIdentity(internal, service, &grpc.UnaryServerInfo{}, pass); err != nil {
		t.Fatal(err)
	}
	if service.Identity != "worker@host" {
		t.Errorf("a service's identity became %q", service.Identity)
	}
}
