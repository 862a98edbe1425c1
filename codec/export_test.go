package codec

// Frame is frame, for the package's external tests (package codec_test).
var Frame = frame
