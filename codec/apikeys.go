package codec

// The API keys that kdissect's code treats apart from the schemas: a Produce with acks=0 gets no
// response, ApiVersions responses always use header v0, SaslHandshake v0 is followed by raw
// tokens, ... Every other API is known by its definition alone.
const (
	KeyProduce            int16 = 0
	KeyFetch              int16 = 1
	KeyControlledShutdown int16 = 7
	KeyFindCoordinator    int16 = 10
	KeySaslHandshake      int16 = 17
	KeyApiVersions        int16 = 18
	KeyEndTxn             int16 = 26
	KeySaslAuthenticate   int16 = 36
	KeyShareFetch         int16 = 78
)

// The API keys that the analyses of a whole conversation (--stats, the doctor) follow besides
// those above: metadata refreshes, group membership and transactions.
const (
	KeyMetadata               int16 = 3
	KeyOffsetCommit           int16 = 8
	KeyOffsetFetch            int16 = 9
	KeyHeartbeat              int16 = 12
	KeyLeaveGroup             int16 = 13
	KeyInitProducerID         int16 = 22
	KeyAddPartitionsToTxn     int16 = 24
	KeyAddOffsetsToTxn        int16 = 25
	KeyTxnOffsetCommit        int16 = 28
	KeyConsumerGroupHeartbeat int16 = 68
	KeyShareGroupHeartbeat    int16 = 76
	KeyStreamsGroupHeartbeat  int16 = 88
)

// CarriesRecords reports whether a message of API key with this direction carries records to
// or from the broker's log: Produce requests, Fetch and ShareFetch responses. (Other messages'
// records fields, if any, are not the topic's data.)
func CarriesRecords(key int16, response bool) bool {
	if response {
		return key == KeyFetch || key == KeyShareFetch
	}
	return key == KeyProduce
}
