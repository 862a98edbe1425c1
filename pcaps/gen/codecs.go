package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// codecNames are the compression codecs, in the order the codec scenarios
// produce them. Each goes to its own topic, codecTopic(prefix, name).
var codecNames = []string{"none", "gzip", "snappy", "lz4", "zstd"}

func codecTopic(prefix, codec string) string { return prefix + "-" + codec }

// codecRecord is one record of the codec scenarios; a nil key or value is
// null on the wire.
type codecRecord struct {
	key, value []byte
	headers    [][2]string
}

// codecRecords returns the four records produced to codec's topic: one
// with two headers, one with a null key, a tombstone (null value), and a
// plain one. The values repeat themselves so that every codec shrinks the
// batch (franz-go sends a batch uncompressed when compressing does not
// make it smaller).
func codecRecords(codec string) []codecRecord {
	text := func(i int) []byte {
		line := fmt.Sprintf("%s record %d: the quick brown fox jumps over the lazy dog. ", codec, i)
		return []byte(strings.Repeat(line, 4))
	}
	return []codecRecord{
		{key: []byte("k-1"), value: text(1), headers: [][2]string{{"codec", codec}, {"trace-id", "4bf92f3577b34da6"}}},
		{key: nil, value: text(2)},
		{key: []byte("k-1"), value: nil},
		{key: []byte("k-2"), value: text(4)},
	}
}

// kgoCodecs: one broker on 9092 and one topic per codec. For each codec a
// franz-go producer with that batch compression writes the four
// codecRecords in one batch; then one consumer reads all five topics from
// the start, so that Fetch responses carry batches of every codec.
func kgoCodecs(ctx context.Context, file string) error {
	const prefix = "kdissect-kgo-codec"
	codecs := map[string]kgo.CompressionCodec{
		"none":   kgo.NoCompression(),
		"gzip":   kgo.GzipCompression(),
		"snappy": kgo.SnappyCompression(),
		"lz4":    kgo.Lz4Compression(),
		"zstd":   kgo.ZstdCompression(),
	}
	var topics []string
	for _, name := range codecNames {
		topics = append(topics, codecTopic(prefix, name))
	}
	ports := []int{9092}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topics...))
	if err != nil {
		return err
	}
	defer c.Close()

	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		n := 0
		for _, name := range codecNames {
			prod, err := kgo.NewClient(kgoOpts(seeds, "kdissect-codec-"+name,
				kgo.DefaultProduceTopic(codecTopic(prefix, name)),
				kgo.ProducerBatchCompression(codecs[name]),
			)...)
			if err != nil {
				return err
			}
			var recs []*kgo.Record
			for i, r := range codecRecords(name) {
				rec := &kgo.Record{Key: r.key, Value: r.value, Timestamp: fixedTime.Add(time.Duration(i) * time.Millisecond)}
				for _, h := range r.headers {
					rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
				}
				recs = append(recs, rec)
			}
			err = prod.ProduceSync(ctx, recs...).FirstErr()
			prod.Close()
			if err != nil {
				return fmt.Errorf("produce %s: %w", name, err)
			}
			n += len(recs)
		}

		cons, err := kgo.NewClient(kgoOpts(seeds, "kdissect-codec-consumer",
			kgo.ConsumeTopics(topics...),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		)...)
		if err != nil {
			return err
		}
		defer cons.Close()
		_, err = pollN(ctx, cons, n)
		return err
	})
}

// saramaCodecs: the same as kgoCodecs with sarama (Version 4.0.0): one
// SyncProducer per codec, then one sarama consumer reading partition 0 of
// every topic from the oldest offset.
func saramaCodecs(ctx context.Context, file string) error {
	const prefix = "kdissect-sarama-codec"
	codecs := map[string]sarama.CompressionCodec{
		"none":   sarama.CompressionNone,
		"gzip":   sarama.CompressionGZIP,
		"snappy": sarama.CompressionSnappy,
		"lz4":    sarama.CompressionLZ4,
		"zstd":   sarama.CompressionZSTD,
	}
	var topics []string
	for _, name := range codecNames {
		topics = append(topics, codecTopic(prefix, name))
	}
	ports := []int{9092}
	c, seeds, err := newCluster(ports, kfake.SeedTopics(1, topics...))
	if err != nil {
		return err
	}
	defer c.Close()

	return withCapture(ctx, file, ports, func(ctx context.Context) error {
		for _, name := range codecNames {
			cfg := saramaConfig("kdissect-sarama-codec-" + name)
			cfg.Producer.Compression = codecs[name]
			prod, err := sarama.NewSyncProducer(seeds, cfg)
			if err != nil {
				return fmt.Errorf("producer %s: %w", name, err)
			}
			var msgs []*sarama.ProducerMessage
			for i, r := range codecRecords(name) {
				m := &sarama.ProducerMessage{
					Topic:     codecTopic(prefix, name),
					Timestamp: fixedTime.Add(time.Duration(i) * time.Millisecond),
				}
				if r.key != nil {
					m.Key = sarama.ByteEncoder(r.key)
				}
				if r.value != nil {
					m.Value = sarama.ByteEncoder(r.value)
				}
				for _, h := range r.headers {
					m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h[0]), Value: []byte(h[1])})
				}
				msgs = append(msgs, m)
			}
			err = prod.SendMessages(msgs)
			if cerr := prod.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("produce %s: %w", name, err)
			}
		}

		cons, err := sarama.NewConsumer(seeds, saramaConfig("kdissect-sarama-codec-consumer"))
		if err != nil {
			return fmt.Errorf("consumer: %w", err)
		}
		defer cons.Close()
		for _, name := range codecNames {
			want := len(codecRecords(name))
			if err := saramaReadPartition(ctx, cons, codecTopic(prefix, name), want); err != nil {
				return err
			}
		}
		return nil
	})
}

// saramaReadPartition reads want messages from partition 0 of topic,
// starting at the oldest offset.
func saramaReadPartition(ctx context.Context, cons sarama.Consumer, topic string, want int) error {
	pc, err := cons.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		return fmt.Errorf("consume %s: %w", topic, err)
	}
	defer pc.Close()
	for got := 0; got < want; {
		select {
		case <-pc.Messages():
			got++
		case err := <-pc.Errors():
			return fmt.Errorf("consume %s: %w", topic, err)
		case <-ctx.Done():
			return fmt.Errorf("consumed %d of %d records from %s: %w", got, want, topic, ctx.Err())
		}
	}
	return nil
}
