package doctor

import "slices"

// errorSeverity is the severity of responses with an error: error for what the client cannot
// get past by itself (authorization, authentication, corruption, sizes, idempotence and
// transactions fenced or broken), info for the steps of a normal group join and fetch session,
// warning for the rest.
func errorSeverity(name string) Severity {
	switch {
	case slices.Contains(errorsSevere, name):
		return Error
	case slices.Contains(errorsExpected, name):
		return Info
	}
	return Warning
}

// errorsSevere are the error codes that mean something must change before the client works.
var errorsSevere = []string{
	"UNKNOWN_SERVER_ERROR", "CORRUPT_MESSAGE", "MESSAGE_TOO_LARGE", "RECORD_LIST_TOO_LARGE",
	"INVALID_REQUIRED_ACKS", "TOPIC_AUTHORIZATION_FAILED", "GROUP_AUTHORIZATION_FAILED",
	"CLUSTER_AUTHORIZATION_FAILED", "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "UNSUPPORTED_SASL_MECHANISM",
	"ILLEGAL_SASL_STATE", "SASL_AUTHENTICATION_FAILED", "OUT_OF_ORDER_SEQUENCE_NUMBER", "INVALID_PRODUCER_EPOCH",
	"PRODUCER_FENCED", "INVALID_TXN_STATE", "KAFKA_STORAGE_ERROR", "UNSUPPORTED_COMPRESSION_TYPE", "INVALID_RECORD",
}

// errorsExpected are the error codes a healthy client meets as steps of the protocol: a new
// member asked for its id (KIP-394), a rebalance under way when a member joins, a fetch
// session the broker evicted or lost track of (KIP-227: the client starts a new one).
var errorsExpected = []string{
	"MEMBER_ID_REQUIRED", "REBALANCE_IN_PROGRESS", "FETCH_SESSION_ID_NOT_FOUND", "INVALID_FETCH_SESSION_EPOCH",
}

// errorAdvice is what to check for the errors met most, by name; others get the check's.
var errorAdvice = map[string]string{
	"REQUEST_TIMED_OUT":            "The broker did not get the acknowledgements of enough replicas in time (the request's timeout): check the replicas' health and load, min.insync.replicas, and the Produce request's timeout (request.timeout.ms).",
	"NOT_LEADER_OR_FOLLOWER":       "Leadership moved (a broker restarted, a reassignment): clients refresh their metadata and retry; many of them mean leaders keep moving.",
	"UNKNOWN_TOPIC_OR_PARTITION":   "The topic does not exist (yet): check its name, auto.create.topics.enable, and whether the client starts before the topic is created.",
	"NOT_COORDINATOR":              "The group's or transaction's coordinator moved: the client finds it again (FindCoordinator); many of them mean coordinators keep moving.",
	"COORDINATOR_LOAD_IN_PROGRESS": "The coordinator is loading its state after a move or restart: transient; if it lasts, check __consumer_offsets' size and the broker's log.",
	"UNKNOWN_MEMBER_ID":            "The coordinator dropped the member (it left, or missed heartbeats for session.timeout.ms, or polled later than max.poll.interval.ms): check those timeouts against the consumer's processing time.",
	"ILLEGAL_GENERATION":           "The member acted for a generation that is over: a rebalance happened meanwhile; check session.timeout.ms, max.poll.interval.ms and the rebalance's cause.",
	"REBALANCE_IN_PROGRESS":        "A member joined or left and the group rebalances: part of a normal join; many of them mean members keep coming and going (see session.timeout.ms, max.poll.interval.ms).",
	"MEMBER_ID_REQUIRED":           "The coordinator asks a new member to join again with the id it gave: a normal step of joining (KIP-394).",
	"FETCH_SESSION_ID_NOT_FOUND":   "The broker no longer has the consumer's fetch session (evicted: max.incremental.fetch.session.cache.slots, or a restart): the consumer starts a new one; many of them mean the cache is too small.",
	"INVALID_FETCH_SESSION_EPOCH":  "The consumer's fetch session went out of step: the consumer starts a new one; many of them point at a retried or lost Fetch.",
	"OFFSET_OUT_OF_RANGE":          "The consumer asked for an offset the log no longer (or not yet) has: retention deleted it, or the offset is wrong; check retention.ms against the consumer's lag and auto.offset.reset.",
	"MESSAGE_TOO_LARGE":            "A batch is larger than the topic accepts: raise max.message.bytes on the topic (message.max.bytes on the broker) or lower the producer's batch.size and max.request.size.",
	"RECORD_LIST_TOO_LARGE":        "A batch is larger than the topic accepts: raise max.message.bytes on the topic or lower the producer's batch.size.",
	"TOPIC_AUTHORIZATION_FAILED":   "The principal may not use the topic: check its ACLs (kafka-acls --list --topic).",
	"GROUP_AUTHORIZATION_FAILED":   "The principal may not use the group: check its ACLs on the group.",
	"SASL_AUTHENTICATION_FAILED":   "Authentication failed: check the user name, password or token, and sasl.mechanism, against the broker's listener.",
	"NOT_ENOUGH_REPLICAS":          "Fewer replicas are in sync than min.insync.replicas: check the replicas' brokers, their disks and networks.",
	"OUT_OF_ORDER_SEQUENCE_NUMBER": "The broker saw a gap in the producer's sequence: see producer-sequence-gap; check for lost Produce requests and the producer's errors before.",
	"INVALID_PRODUCER_EPOCH":       "A producer with a newer epoch took over the producer id (a fenced zombie, or a transaction timed out: transaction.timeout.ms).",
	"PRODUCER_FENCED":              "Another producer with the same transactional.id took over: check that each transactional.id is used by one instance.",
}
