package main

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	adminTopicA = "kdissect-admin-a"
	adminTopicB = "kdissect-admin-b"
	adminGroup  = "kdissect-admin-group"
)

// kgoAdmin: one broker on 9092, saved as pcapng; a franz-go
// admin client (kadm) creates, describes, alters and deletes topics,
// configs, partitions, offsets and a group.
func kgoAdmin(ctx context.Context, file string) error {
	ports := []int{9092}
	c, seeds, err := newCluster(ports)
	if err != nil {
		return err
	}
	defer c.Close()

	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		cl, err := kgo.NewClient(kgoOpts(seeds, "kdissect-admin", kgo.DefaultProduceTopic(adminTopicA))...)
		if err != nil {
			return err
		}
		defer cl.Close()
		adm := kadm.NewClient(cl)
		var steps []adminStep
		for _, group := range []func(context.Context, *kgo.Client, *kadm.Client) []adminStep{
			adminTopicSteps, adminConfigSteps, adminOffsetSteps, adminCleanupSteps,
		} {
			steps = append(steps, group(ctx, cl, adm)...)
		}
		for _, s := range steps {
			if err := s.do(); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
		}
		return nil
	})
}

// adminStep is one request of the admin scenario, named for its error.
type adminStep struct {
	name string
	do   func() error
}

// str is a config value as kadm takes one.
func str(s string) *string { return &s }

// adminTopicSteps: the cluster described, the topics created and given partitions.
func adminTopicSteps(ctx context.Context, cl *kgo.Client, adm *kadm.Client) []adminStep {
	return []adminStep{
		{"ApiVersions", func() error { _, err := adm.ApiVersions(ctx); return err }},
		{"Metadata", func() error { _, err := adm.BrokerMetadata(ctx); return err }},
		{"DescribeCluster", func() error {
			resp, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, cl)
			if err != nil {
				return err
			}
			return kerr.ErrorForCode(resp.ErrorCode)
		}},
		{"CreateTopics", func() error {
			rs, err := adm.CreateTopics(ctx, 2, 1, map[string]*string{"retention.ms": str("3600000")}, adminTopicA, adminTopicB)
			return firstErr(err, rs.Error)
		}},
		{"CreatePartitions", func() error {
			rs, err := adm.CreatePartitions(ctx, 2, adminTopicA)
			return firstErr(err, rs.Error)
		}},
	}
}

// adminConfigSteps: the configs of a topic and of the broker described, and altered both ways.
func adminConfigSteps(ctx context.Context, cl *kgo.Client, adm *kadm.Client) []adminStep {
	return []adminStep{
		{"DescribeConfigs (topic)", func() error {
			rs, err := adm.DescribeTopicConfigs(ctx, adminTopicA)
			if err != nil {
				return err
			}
			return rs[0].Err
		}},
		{"DescribeConfigs (broker)", func() error {
			rs, err := adm.DescribeBrokerConfigs(ctx)
			if err != nil {
				return err
			}
			return rs[0].Err
		}},
		{"IncrementalAlterConfigs", func() error {
			rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
				{Op: kadm.SetConfig, Name: "cleanup.policy", Value: str("compact")},
				{Op: kadm.DeleteConfig, Name: "retention.ms"},
			}, adminTopicA)
			if err != nil {
				return err
			}
			return rs[0].Err
		}},
		{"AlterConfigs", func() error {
			rs, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: str("7200000")}}, adminTopicB)
			if err != nil {
				return err
			}
			return rs[0].Err
		}},
	}
}

// adminOffsetSteps: records produced, their offsets listed, a group's offsets committed and
// fetched, the groups listed and described.
func adminOffsetSteps(ctx context.Context, cl *kgo.Client, adm *kadm.Client) []adminStep {
	return []adminStep{
		{"Produce", func() error {
			var rs []*kgo.Record
			for i := range 3 {
				rs = append(rs, &kgo.Record{
					Key:       fmt.Appendf(nil, "key-%d", i),
					Value:     fmt.Appendf(nil, "value-%d", i),
					Partition: 0,
					Timestamp: fixedTime,
				})
			}
			return cl.ProduceSync(ctx, rs...).FirstErr()
		}},
		{"ListOffsets (start)", func() error {
			os, err := adm.ListStartOffsets(ctx, adminTopicA)
			return firstErr(err, os.Error)
		}},
		{"ListOffsets (end)", func() error {
			os, err := adm.ListEndOffsets(ctx, adminTopicA, adminTopicB)
			return firstErr(err, os.Error)
		}},
		{"OffsetCommit", func() error {
			os := kadm.Offsets{}
			os.Add(kadm.Offset{Topic: adminTopicA, Partition: 0, At: 2, LeaderEpoch: -1, Metadata: "committed by kadm"})
			rs, err := adm.CommitOffsets(ctx, adminGroup, os)
			return firstErr(err, rs.Error)
		}},
		{"OffsetFetch", func() error {
			rs, err := adm.FetchOffsets(ctx, adminGroup)
			return firstErr(err, rs.Error)
		}},
		{"ListGroups", func() error { _, err := adm.ListGroups(ctx); return err }},
		{"DescribeGroups", func() error {
			gs, err := adm.DescribeGroups(ctx, adminGroup)
			return firstErr(err, gs.Error)
		}},
	}
}

// adminCleanupSteps: records deleted, log dirs and producers described, the group and the
// topics deleted.
func adminCleanupSteps(ctx context.Context, cl *kgo.Client, adm *kadm.Client) []adminStep {
	return []adminStep{
		{"DeleteRecords", func() error {
			os := kadm.Offsets{}
			os.Add(kadm.Offset{Topic: adminTopicA, Partition: 0, At: 1})
			rs, err := adm.DeleteRecords(ctx, os)
			return firstErr(err, rs.Error)
		}},
		{"DescribeLogDirs", func() error { _, err := adm.DescribeAllLogDirs(ctx, nil); return err }},
		{"DescribeProducers", func() error {
			_, err := adm.DescribeProducers(ctx, kadm.TopicsSet{adminTopicA: {0: {}}})
			return err
		}},
		{"DeleteGroups", func() error {
			rs, err := adm.DeleteGroups(ctx, adminGroup)
			return firstErr(err, rs.Error)
		}},
		{"DeleteTopics", func() error {
			rs, err := adm.DeleteTopics(ctx, adminTopicA, adminTopicB)
			return firstErr(err, rs.Error)
		}},
	}
}

// firstErr returns err, or else what check returns: kadm answers with a
// request error and, inside the response, an error per item.
func firstErr(err error, check func() error) error {
	if err != nil {
		return err
	}
	return check()
}
