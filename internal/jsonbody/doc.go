// Package jsonbody finds what encoding/json does not say in a type: the
// key of a JSON object that a strict decode (Decoder.DisallowUnknownFields)
// refused, which the decoder reports only in the text of its error.
package jsonbody
