// Command kedaoracle answers questions about Go's standard library and expr-lang v1.17.8
// the way KEDA's code asks them, so gpuscale's Python ports can be pinned to real
// answers. It reads one JSON request per line on stdin and writes one JSON answer per
// line on stdout. See README.md beside this file for how the golden table is rebuilt.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr"
)

type request struct {
	Kind     string              `json:"kind"`
	Text     string              `json:"text"`
	Formula  string              `json:"formula"`
	Declared []string            `json:"declared"`
	Values   map[string]*float64 `json:"values"`
}

type answer struct {
	Ok     bool   `json:"ok"`
	Value  any    `json:"value,omitempty"`
	Float  string `json:"float,omitempty"`
	Kind   string `json:"type,omitempty"`
	Error  string `json:"error,omitempty"`
	Panics bool   `json:"panics,omitempty"`
}

// The shape KEDA decodes a Prometheus answer into (prometheus_scaler.go promQueryResult).
type promAnswer struct {
	Status string `json:"status"`
	Data   struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric struct{} `json:"metric"`
			Value  []any    `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

func floatText(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func describe(v any) answer {
	switch x := v.(type) {
	case nil:
		return answer{Ok: true, Kind: "nil"}
	case float64:
		return answer{Ok: true, Kind: "float", Float: floatText(x)}
	case int:
		return answer{Ok: true, Kind: "int", Value: x}
	case bool:
		return answer{Ok: true, Kind: "bool", Value: x}
	case string:
		return answer{Ok: true, Kind: "string", Value: x}
	}
	return answer{Ok: true, Kind: fmt.Sprintf("%T", v), Value: fmt.Sprintf("%v", v)}
}

// kedaFormula mirrors what KEDA does with a scalingModifiers formula: wrap it
// (castToFloatIfNecessary), compile it against the declared trigger names as float64,
// and run it on the given values (nil for a trigger in fallback).
func kedaFormula(r request) (a answer) {
	defer func() {
		if p := recover(); p != nil {
			a = answer{Panics: true, Error: fmt.Sprint(p)}
		}
	}()
	formula := r.Formula
	if strings.Contains(formula, "??") {
		if !strings.HasPrefix(formula, "let _kedaCompositeResult = ") {
			formula = fmt.Sprintf("let _kedaCompositeResult = (%s); _kedaCompositeResult == nil ? nil : float(_kedaCompositeResult)", formula)
		}
	} else if !strings.HasPrefix(formula, "float(") {
		formula = "float(" + formula + ")"
	}
	env := map[string]float64{}
	for _, name := range r.Declared {
		env[name] = -1.0
	}
	program, err := expr.Compile(formula, expr.Env(env))
	if err != nil {
		return answer{Error: "compile: " + err.Error()}
	}
	data := map[string]any{}
	for name, value := range r.Values {
		if value == nil {
			data[name] = nil
		} else {
			data[name] = *value
		}
	}
	out, err := expr.Run(program, data)
	if err != nil {
		return answer{Error: "run: " + err.Error()}
	}
	return describe(out)
}

func handle(r request) (a answer) {
	defer func() {
		if p := recover(); p != nil {
			a = answer{Panics: true, Error: fmt.Sprint(p)}
		}
	}()
	switch r.Kind {
	case "ParseFloat":
		f, err := strconv.ParseFloat(r.Text, 64)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{Ok: true, Float: floatText(f)}
	case "ParseBool":
		b, err := strconv.ParseBool(r.Text)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{Ok: true, Value: b}
	case "ParseInt32":
		i, err := strconv.ParseInt(r.Text, 10, 32)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{Ok: true, Value: i}
	case "ParseDuration":
		d, err := time.ParseDuration(r.Text)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{Ok: true, Value: int64(d)}
	case "TypedFloat":
		// KEDA's typed config fills a float64 field by unmarshalling the text into an
		// interface holding a *float64, then reading the pointer back (scalersconfig).
		holder := reflect.New(reflect.TypeOf(float64(0))).Interface()
		if err := json.Unmarshal([]byte(r.Text), &holder); err != nil {
			return answer{Error: err.Error()}
		}
		f := reflect.ValueOf(holder).Elem().Float()
		return answer{Ok: true, Float: floatText(f)}
	case "Pow":
		var args [2]float64
		if err := json.Unmarshal([]byte(r.Text), &args); err != nil {
			return answer{Error: err.Error()}
		}
		return answer{Ok: true, Float: floatText(math.Pow(args[0], args[1]))}
	case "TrimSpace":
		return answer{Ok: true, Value: strings.TrimSpace(r.Text)}
	case "PromDecode":
		var p promAnswer
		if err := json.Unmarshal([]byte(r.Text), &p); err != nil {
			return answer{Error: err.Error()}
		}
		results := p.Data.Result
		shape := map[string]any{"results": len(results)}
		if len(results) == 1 {
			shape["values"] = len(results[0].Value)
			if len(results[0].Value) >= 2 {
				shape["second"] = fmt.Sprintf("%T", results[0].Value[1])
				if s, ok := results[0].Value[1].(string); ok {
					shape["text"] = s
				}
			}
		}
		return answer{Ok: true, Value: shape}
	case "Formula":
		return kedaFormula(r)
	}
	return answer{Error: "unknown kind " + r.Kind}
}

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for scanner.Scan() {
		var r request
		if err := json.Unmarshal(scanner.Bytes(), &r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := out.Encode(handle(r)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
}
