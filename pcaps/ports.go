package pcaps

// Ports are the TCP ports the Kafka brokers of the captures here listen on, written as
// kdissect's -p takes them: 9092-9094 for most, 36333 and 19092 for kgo-odd-ports.pcap, 19100
// for kgo-lag.pcap, 19200-19203 for the captures of the groups, producers and transactions
// analyses, 19300-19305 for those of the doctor's group and consumer findings, and 19400-19405
// and 19410-19415 for those of its broker, producer and connection findings. Tests that read
// every capture here take these ports, and only these, as Kafka.
const Ports = "9092-9094,19092,19100,19200-19203,19300-19305,19400-19405,19410-19415,36333"
