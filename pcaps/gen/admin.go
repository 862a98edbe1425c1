package main

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kgoAdmin: one broker on 9092, saved as pcapng; a franz-go
// admin client (kadm) creates, describes, alters and deletes topics,
// configs, partitions, offsets and a group.
func kgoAdmin(ctx context.Context, file string) error {
	const (
		topicA = "kdissect-admin-a"
		topicB = "kdissect-admin-b"
		group  = "kdissect-admin-group"
	)
	ports := []int{9092}
	c, seeds, err := newCluster(ports)
	if err != nil {
		return err
	}
	defer c.Close()

	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		cl, err := kgo.NewClient(kgoOpts(seeds, "kdissect-admin", kgo.DefaultProduceTopic(topicA))...)
		if err != nil {
			return err
		}
		defer cl.Close()
		adm := kadm.NewClient(cl)
		str := func(s string) *string { return &s }

		steps := []struct {
			name string
			do   func() error
		}{
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
				rs, err := adm.CreateTopics(ctx, 2, 1, map[string]*string{"retention.ms": str("3600000")}, topicA, topicB)
				return firstErr(err, rs.Error)
			}},
			{"CreatePartitions", func() error {
				rs, err := adm.CreatePartitions(ctx, 2, topicA)
				return firstErr(err, rs.Error)
			}},
			{"DescribeConfigs (topic)", func() error {
				rs, err := adm.DescribeTopicConfigs(ctx, topicA)
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
				}, topicA)
				if err != nil {
					return err
				}
				return rs[0].Err
			}},
			{"AlterConfigs", func() error {
				rs, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: str("7200000")}}, topicB)
				if err != nil {
					return err
				}
				return rs[0].Err
			}},
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
				os, err := adm.ListStartOffsets(ctx, topicA)
				return firstErr(err, os.Error)
			}},
			{"ListOffsets (end)", func() error {
				os, err := adm.ListEndOffsets(ctx, topicA, topicB)
				return firstErr(err, os.Error)
			}},
			{"OffsetCommit", func() error {
				os := kadm.Offsets{}
				os.Add(kadm.Offset{Topic: topicA, Partition: 0, At: 2, LeaderEpoch: -1, Metadata: "committed by kadm"})
				rs, err := adm.CommitOffsets(ctx, group, os)
				return firstErr(err, rs.Error)
			}},
			{"OffsetFetch", func() error {
				rs, err := adm.FetchOffsets(ctx, group)
				return firstErr(err, rs.Error)
			}},
			{"ListGroups", func() error { _, err := adm.ListGroups(ctx); return err }},
			{"DescribeGroups", func() error {
				gs, err := adm.DescribeGroups(ctx, group)
				return firstErr(err, gs.Error)
			}},
			{"DeleteRecords", func() error {
				os := kadm.Offsets{}
				os.Add(kadm.Offset{Topic: topicA, Partition: 0, At: 1})
				rs, err := adm.DeleteRecords(ctx, os)
				return firstErr(err, rs.Error)
			}},
			{"DescribeLogDirs", func() error { _, err := adm.DescribeAllLogDirs(ctx, nil); return err }},
			{"DescribeProducers", func() error {
				_, err := adm.DescribeProducers(ctx, kadm.TopicsSet{topicA: {0: {}}})
				return err
			}},
			{"DeleteGroups", func() error {
				rs, err := adm.DeleteGroups(ctx, group)
				return firstErr(err, rs.Error)
			}},
			{"DeleteTopics", func() error {
				rs, err := adm.DeleteTopics(ctx, topicA, topicB)
				return firstErr(err, rs.Error)
			}},
		}
		for _, s := range steps {
			if err := s.do(); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
		}
		return nil
	})
}

// firstErr returns err, or else what check returns: kadm answers with a
// request error and, inside the response, an error per item.
func firstErr(err error, check func() error) error {
	if err != nil {
		return err
	}
	return check()
}
