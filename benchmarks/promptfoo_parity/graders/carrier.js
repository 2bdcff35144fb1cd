// Checks the carrier in a JSON answer; a partial score when the days are missing.
module.exports = (output, context) => {
  const data = JSON.parse(output);
  const wanted = context.vars.carrier;
  if (data.carrier !== wanted) {
    return { pass: false, score: 0, reason: `carrier ${data.carrier}, wanted ${wanted}` };
  }
  return { pass: true, score: data.days ? 1 : 0.5, reason: 'carrier matches' };
};
