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

// CarriesRecords reports whether a message of API key with this direction carries records to
// or from the broker's log: Produce requests, Fetch and ShareFetch responses. (Other messages'
// records fields, if any, are not the topic's data.)
func CarriesRecords(key int16, response bool) bool {
	if response {
		return key == KeyFetch || key == KeyShareFetch
	}
	return key == KeyProduce
}
