// The production topology's Temporal server (docs/operations.md "Operator sign-on"): the stock server of the pinned
// release, started the way its own command starts it, with two additions the stock binary cannot be configured for:
// terminate, reset and delete are kept for admins (authorizer.go), and the identity a person's call carries is the
// one their verified token names (identity.go). Built by scripts/temporal-binaries.sh server.
package main

import (
	"fmt"
	"os"
	_ "time/tzdata" // the zone database when the host has none, as the stock server embeds it

	"github.com/urfave/cli/v2"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/headers"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // the only store this project runs on
	"go.temporal.io/server/temporal"
)

func main() {
	app := cli.NewApp()
	app.Name = "temporal-server"
	app.Usage = "Temporal server with the payments service's operator rules"
	app.Version = headers.ServerVersion
	app.Flags = []cli.Flag{
		&cli.StringFlag{
			Name:    "config-file",
			Usage:   "config file; without it the server's embedded template, filled from the environment",
			EnvVars: []string{config.EnvKeyConfigFile},
		},
	}
	app.Commands = []*cli.Command{{
		Name:  "start",
		Usage: "start the server",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{
				Name:    "service",
				Aliases: []string{"svc"},
				Value:   cli.NewStringSlice(temporal.DefaultServices...),
				Usage:   "service(s) to start",
				EnvVars: []string{"TEMPORAL_SERVICES"},
			},
		},
		Action: start,
	}}
	if err := app.Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func start(c *cli.Context) error {
	var cfg *config.Config
	var err error
	if c.IsSet("config-file") {
		cfg, err = config.Load(config.WithConfigFile(c.String("config-file")))
	} else {
		cfg, err = config.Load(config.WithEmbedded())
	}
	if err != nil {
		return cli.Exit(fmt.Sprintf("unable to load configuration: %v", err), 1)
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))
	logger.Info("Starting the payments Temporal server.", tag.String("server-version", headers.ServerVersion))

	authorizer, err := authorization.GetAuthorizerFromConfig(&cfg.Global.Authorization)
	if err != nil {
		return cli.Exit(fmt.Sprintf("unable to instantiate the authorizer: %v", err), 1)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&cfg.Global.Authorization, logger)
	if err != nil {
		return cli.Exit(fmt.Sprintf("unable to instantiate the claim mapper: %v", err), 1)
	}
	audienceMapper, err := authorization.GetAudienceMapperFromConfig(&cfg.Global.Authorization)
	if err != nil {
		return cli.Exit(fmt.Sprintf("unable to instantiate the audience mapper: %v", err), 1)
	}
	identityClaim := os.Getenv("TEMPORAL_JWT_IDENTITY_CLAIM")
	if identityClaim == "" {
		identityClaim = "email"
	}

	server, err := temporal.NewServer(
		temporal.ForServices(c.StringSlice("service")),
		temporal.WithConfig(cfg),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
		temporal.WithAuthorizer(adminOnlyDestructive(authorizer)),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper {
			return withIdentity(claimMapper, identityClaim)
		}),
		temporal.WithAudienceGetter(func(*config.Config) authorization.JWTAudienceMapper { return audienceMapper }),
		temporal.WithChainedFrontendGrpcInterceptors(stampIdentity),
	)
	if err != nil {
		return cli.Exit(fmt.Sprintf("unable to create the server: %v", err), 1)
	}
	if err := server.Start(); err != nil {
		return cli.Exit(fmt.Sprintf("unable to start the server: %v", err), 1)
	}
	return nil
}
