package schema

import "fmt"

// The names kdissect gives the fields of the request and response headers, after their roles,
// whatever a definition calls them (Kafka's RequestHeader.json says RequestApiKey,
// RequestApiVersion, CorrelationId and ClientId): the names of Kafka's protocol guide, which
// the pairing, the filters and every output find them by.
const (
	FieldAPIKey        = "request_api_key"
	FieldAPIVersion    = "request_api_version"
	FieldCorrelationID = "correlation_id"
	FieldClientID      = "client_id"
)

// headerRole is one of the leading fields of a header, whose place the protocol fixes.
type headerRole struct {
	kind Kind
	typ  string // the kind as definitions write it
	name string
	what string
}

// headerRoles are a header's fields in wire order, by the protocol; nil for an unknown header.
func headerRoles(header string) []headerRole {
	switch header {
	case "RequestHeader":
		return []headerRole{
			{Int16, "int16", FieldAPIKey, "API key"},
			{Int16, "int16", FieldAPIVersion, "API version"},
			{Int32, "int32", FieldCorrelationID, "correlation id"},
			{String, "string", FieldClientID, "client id"},
		}
	case "ResponseHeader":
		return []headerRole{{Int32, "int32", FieldCorrelationID, "correlation id"}}
	}
	return nil
}

// nameHeaderFields gives the fields of header definition m the names of their roles. The
// roles go by place and type, as on the wire: a header whose fields do not match the
// protocol's is refused, since the pairing reads the headers by place.
func nameHeaderFields(m *Message) error {
	roles := headerRoles(m.Name)
	if roles == nil {
		return fmt.Errorf("%s: unknown header %q (RequestHeader or ResponseHeader)", m.Source, m.Name)
	}
	for i, r := range roles {
		if i >= len(m.Body.Fields) {
			return fmt.Errorf("%s: %s has no field %d, the %s (%s)", m.Source, m.Name, i+1, r.what, r.typ)
		}
		f := m.Body.Fields[i]
		if f.Kind != r.kind {
			return fmt.Errorf("%s: %s: field %d (%s) is %s, where the protocol puts the %s (%s)", m.Source, m.Name, i+1, f.Name, f.Type, r.what, r.typ)
		}
		f.Name = r.name
	}
	return nil
}
